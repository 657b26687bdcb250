package ops

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Confirm asks question on out and reads one line of in: "y" or "yes" (in
// any case) confirms; anything else, an empty line or the end of input
// declines.
func Confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	if _, err := fmt.Fprintf(out, "%s [y/N] ", question); err != nil {
		return false, fmt.Errorf("ask for confirmation: %w", err)
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
