package pgstore_test

import (
	"testing"

	"retrace/storage/pgstore/pgtest"
	"retrace/storage/storetest"
)

func TestConformance(t *testing.T) {
	pgtest.ServerURL(t)
	storetest.Run(t, storetest.Backend{NewLocation: newDatabase, Open: openStore})
}
