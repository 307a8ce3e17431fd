package tools

import (
	"errors"
	"fmt"
	"strings"
)

// noteArgs are note's arguments.
type noteArgs struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// rememberArgs are remember's arguments.
type rememberArgs struct {
	Text       string `json:"text"`
	Everywhere bool   `json:"everywhere"`
}

// ParseRemember checks the arguments of a remember call, which the agent
// handles itself: the text, trimmed and not empty, and whether it holds
// for every project.
func ParseRemember(args string) (text string, everywhere bool, err error) {
	var a rememberArgs
	if err := decodeArgs("remember", rememberParams, args, &a); err != nil {
		return "", false, err
	}
	return a.clean()
}

func (a *rememberArgs) clean() (string, bool, error) {
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return "", false, invalidArgs("remember", errors.New("text must not be empty"))
	}
	return text, a.Everywhere, nil
}

// planArgs are set_plan's arguments.
type planArgs struct {
	Goal  string   `json:"goal"`
	Steps []string `json:"steps"`
	Done  int      `json:"done"`
}

// Plan is a set_plan call's plan: the steps in order, how many of them
// (from the first) are done, and the goal if the model gave one.
type Plan struct {
	Goal  string
	Steps []string
	Done  int
}

// ParseNote checks the arguments of a note call, which the agent handles
// itself. Key and value come back trimmed; an empty value means the note
// is to be deleted. Errors wrap ErrInvalidArguments and are written for
// the model, like Run's.
func ParseNote(args string) (key, value string, err error) {
	var a noteArgs
	if err := decodeArgs("note", noteParams, args, &a); err != nil {
		return "", "", err
	}
	return a.clean()
}

// clean trims the note and checks it has a key.
func (a *noteArgs) clean() (key, value string, err error) {
	key = strings.TrimSpace(a.Key)
	if key == "" {
		return "", "", invalidArgs("note", errors.New("key must not be empty"))
	}
	return key, strings.TrimSpace(a.Value), nil
}

// ParsePlan checks the arguments of a set_plan call, which the agent
// handles itself. Steps come back trimmed, with empty ones dropped; at
// least one must remain. The goal is optional; done counts the finished
// steps, from the first, and is at most their number.
func ParsePlan(args string) (Plan, error) {
	var a planArgs
	if err := decodeArgs("set_plan", planParams, args, &a); err != nil {
		return Plan{}, err
	}
	return a.clean()
}

// clean trims the goal and the steps, drops empty steps, and checks one is
// left and done is in range.
func (a *planArgs) clean() (Plan, error) {
	var steps []string
	for _, s := range a.Steps {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return Plan{}, invalidArgs("set_plan", errors.New("steps must hold at least one non-empty step"))
	}
	if a.Done < 0 || a.Done > len(steps) {
		return Plan{}, invalidArgs("set_plan", fmt.Errorf("done must be between 0 and the number of steps (%d), not %d", len(steps), a.Done))
	}
	return Plan{Goal: strings.TrimSpace(a.Goal), Steps: steps, Done: a.Done}, nil
}
