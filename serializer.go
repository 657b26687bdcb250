package reliar

import (
	"encoding/json"
	"fmt"
)

// Serializer turns a message body into payload bytes. The store writes the
// serializer's content type to every row it enqueues.
type Serializer interface {
	ContentType() string
	Serialize(body any) ([]byte, error)
}

// JSON is the default serializer: encoding/json, content type
// "application/json".
var JSON Serializer = jsonSerializer{}

type jsonSerializer struct{}

func (jsonSerializer) ContentType() string { return "application/json" }

func (jsonSerializer) Serialize(body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("reliar: serialize %T as JSON: %w", body, err)
	}
	return b, nil
}
