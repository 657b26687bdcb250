package sqlitestore_test

import "testing"

// Rows another program wrote badly are moved to dead as undecodable; the
// rest of the batch goes on.
func TestPoisonRows(t *testing.T) { target.PoisonRows(t) }
