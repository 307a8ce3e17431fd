package tools

import (
	"errors"
	"slices"
	"testing"
)

func TestParseNote(t *testing.T) {
	for _, tc := range []struct {
		args, key, value, err string
	}{
		{`{"key":"test cmd","value":"go test ./..."}`, "test cmd", "go test ./...", ""},
		{`{"key":"  k ","value":"  v  "}`, "k", "v", ""},
		{`{"key":"k","value":""}`, "k", "", ""},
		{`{"key":"k"}`, "", "", `invalid arguments for note: missing required field "value"`},
		{`{"key":" ","value":"v"}`, "", "", "key must not be empty"},
		{`{"key":1,"value":"v"}`, "", "", `"key" must be a string`},
		{`{"key":"k","value":"v","x":1}`, "", "", `unknown field "x"`},
		{`nope`, "", "", "invalid arguments for note"},
	} {
		key, value, err := ParseNote(tc.args)
		if tc.err != "" && !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("ParseNote(%s): %v is not ErrInvalidArguments", tc.args, err)
		}
		t.Run(tc.args, func(t *testing.T) { checkErr(t, err, tc.err) })
		if key != tc.key || value != tc.value {
			t.Errorf("ParseNote(%s) = %q, %q; want %q, %q", tc.args, key, value, tc.key, tc.value)
		}
	}
}

func TestParsePlan(t *testing.T) {
	for _, tc := range []struct {
		args, goal string
		steps      []string
		err        string
	}{
		{`{"goal":"ship","steps":["read","change","test"]}`, "ship", []string{"read", "change", "test"}, ""},
		{`{"steps":[" a ","","  ","b"]}`, "", []string{"a", "b"}, ""},
		{`{"steps":[]}`, "", nil, "steps must hold at least one non-empty step"},
		{`{"steps":["", " "]}`, "", nil, "at least one non-empty step"},
		{`{"goal":"x"}`, "", nil, `missing required field "steps"`},
		{`{"steps":"do it"}`, "", nil, `"steps" must be an array of strings`},
		{`{"steps":[1,2]}`, "", nil, `"steps" must be an array of strings`},
	} {
		goal, steps, err := ParsePlan(tc.args)
		t.Run(tc.args, func(t *testing.T) { checkErr(t, err, tc.err) })
		if goal != tc.goal || !slices.Equal(steps, tc.steps) {
			t.Errorf("ParsePlan(%s) = %q, %q; want %q, %q", tc.args, goal, steps, tc.goal, tc.steps)
		}
	}
}
