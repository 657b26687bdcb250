package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Files appends results as JSON lines to one file per scenario,
// <dir>/<date>-<scenario>.jsonl, named after the day the run started.
type Files struct {
	dir    string
	prefix string
	mu     sync.Mutex
	files  map[string]*os.File
}

// NewFiles writes into dir, creating it if needed; the files of a run that
// started at start are prefixed with its date (UTC).
func NewFiles(dir string, start time.Time) (*Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: results directory: %w", err)
	}
	return &Files{dir: dir, prefix: start.UTC().Format("2006-01-02"), files: map[string]*os.File{}}, nil
}

// Write appends r to its scenario's file.
func (f *Files) Write(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("report: encode result: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	file, ok := f.files[r.Scenario]
	if !ok {
		name := filepath.Join(f.dir, f.prefix+"-"+r.Scenario+".jsonl")
		file, err = os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("report: open %s: %w", name, err)
		}
		f.files[r.Scenario] = file
	}
	if _, err := file.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("report: write %s: %w", file.Name(), err)
	}
	return nil
}

// Paths returns the files written so far.
func (f *Files) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, file := range f.files {
		out = append(out, file.Name())
	}
	return out
}

// Close closes every file.
func (f *Files) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, file := range f.files {
		errs = append(errs, file.Close())
	}
	f.files = map[string]*os.File{}
	return errors.Join(errs...)
}
