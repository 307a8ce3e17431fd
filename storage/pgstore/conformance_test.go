package pgstore_test

import (
	"testing"

	"retrace/storage/storetest"
)

func TestConformance(t *testing.T) {
	serverURL(t)
	storetest.Run(t, storetest.Backend{NewLocation: newDatabase, Open: openStore})
}
