package sqlitestore_test

import "testing"

// Rows another program wrote badly are moved to dead as undecodable; the
// rest of the batch goes on.
func TestPoisonRows(t *testing.T) { target.PoisonRows(t) }

// Ids that another program wrote in another form than the canonical one are
// refused at insert.
func TestForeignIDs(t *testing.T) { target.ForeignIDs(t) }
