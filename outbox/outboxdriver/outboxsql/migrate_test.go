package outboxsql

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		want    []Migration
		wantErr string
	}{
		{name: "version order, down files skipped", fsys: fstest.MapFS{
			"0010_ten.up.sql":   file("ten"),
			"0002_two.up.sql":   file("two"),
			"0002_two.down.sql": file("undo two"),
		}, want: []Migration{{2, "0002_two.up.sql", "two"}, {10, "0010_ten.up.sql", "ten"}}},
		{name: "empty", fsys: fstest.MapFS{}},
		{name: "no version", fsys: fstest.MapFS{"outbox.up.sql": file("x")}, wantErr: `"outbox.up.sql" is not named`},
		{name: "version not a number", fsys: fstest.MapFS{"v1_outbox.up.sql": file("x")}, wantErr: "not named"},
		{name: "not up", fsys: fstest.MapFS{"0001_outbox.sql": file("x")}, wantErr: "not named"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadMigrations(tt.fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadMigrations: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("LoadMigrations = %v, %v; want %v", got, err, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("migration %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	if _, err := LoadMigrations(fstest.MapFS{"0001_a.up.sql/x": file("x")}); err == nil {
		t.Error("LoadMigrations read a directory as a migration")
	}
}

func TestMustSub(t *testing.T) {
	fsys := fstest.MapFS{"migrations/0001_a.up.sql": &fstest.MapFile{Data: []byte("a")}}
	ms, err := LoadMigrations(MustSub(fsys, "migrations"))
	if err != nil || len(ms) != 1 || ms[0].SQL != "a" {
		t.Fatalf("LoadMigrations(MustSub) = %v, %v", ms, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustSub of an invalid name did not panic")
		}
	}()
	MustSub(fsys, "../up")
}

func TestAppliedVersion(t *testing.T) {
	boom := errors.New("boom")
	const exists = "SELECT tables"
	tests := []struct {
		name    string
		tables  int64
		max     int64
		failOn  string // the query that fails
		want    int
		wantErr error
	}{
		{name: "no version table", tables: 0, want: 0},
		{name: "applied", tables: 1, max: 2, want: 2},
		{name: "empty table", tables: 1, max: 0, want: 0},
		{name: "exists query fails", failOn: exists, wantErr: boom},
		{name: "version query fails", tables: 1, failOn: "SELECT COALESCE", wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDB{answer: func(query string, args []any) ([]string, [][]driver.Value, error) {
				if tt.failOn != "" && strings.HasPrefix(query, tt.failOn) {
					return nil, nil, boom
				}
				if query == exists {
					if len(args) != 1 || args[0] != VersionTable {
						t.Errorf("exists query args %v", args)
					}
					return []string{"n"}, [][]driver.Value{{tt.tables}}, nil
				}
				return []string{"v"}, [][]driver.Value{{tt.max}}, nil
			}}
			got, err := AppliedVersion(t.Context(), f.open(t), exists)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("AppliedVersion = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
