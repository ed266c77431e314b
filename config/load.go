package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrConfig marks every error that comes from a configuration (missing file, bad YAML, invalid
// field). The CLI maps it to exit status 2.
var ErrConfig = errors.New("configuration error")

// Error wraps a configuration problem so that errors.Is(err, ErrConfig) holds.
type Error struct{ Err error }

func (e *Error) Error() string   { return e.Err.Error() }
func (e *Error) Unwrap() []error { return []error{ErrConfig, e.Err} }

// Load reads, decodes and validates a YAML configuration file. Fields the file omits keep their
// defaults. Every error is a *Error.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Config{}, &Error{fmt.Errorf("config: file %s: does not exist", path)}
		}
		return Config{}, &Error{fmt.Errorf("config: file %s: %w", path, err)}
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, &Error{fmt.Errorf("%s: %w", path, err)}
	}
	return c, nil
}

// Parse decodes and validates YAML bytes on top of Default().
func Parse(data []byte) (Config, error) {
	c := Default()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, errEOF()) {
			return c, c.Validate()
		}
		return Config{}, fmt.Errorf("config: not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := decodeStruct(root, reflect.ValueOf(&c).Elem(), ""); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func errEOF() error {
	var n yaml.Node
	return yaml.NewDecoder(bytes.NewReader(nil)).Decode(&n)
}

// decodeStruct walks a YAML mapping into a struct by its yaml tags, so that every error names
// the field's full path and the offending value; an unknown key is an error.
func decodeStruct(n *yaml.Node, v reflect.Value, prefix string) error {
	if n.Kind != yaml.MappingNode {
		where := strings.TrimSuffix(prefix, ".")
		if where == "" {
			where = "(document)"
		}
		return &FieldError{where, describe(n), "a mapping of field: value"}
	}
	t := v.Type()
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		name := prefix + key.Value
		if seen[key.Value] {
			return &FieldError{name, describe(val), fmt.Sprintf("given once (line %d repeats it)", key.Line)}
		}
		seen[key.Value] = true
		idx := fieldIndex(t, key.Value)
		if idx < 0 {
			return &FieldError{name, describe(val), "a known field (line " + strconv.Itoa(key.Line) +
				" is not one; known: " + strings.Join(knownFields(t), ", ") + ")"}
		}
		if err := decodeValue(val, v.Field(idx), name); err != nil {
			return err
		}
	}
	return nil
}

func decodeValue(n *yaml.Node, f reflect.Value, name string) error {
	switch f.Kind() {
	case reflect.Struct:
		return decodeStruct(n, f, name+".")
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return &FieldError{name, describe(n), "an integer"}
		}
		x, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return &FieldError{name, describe(n), "an integer"}
		}
		f.SetInt(x)
	case reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return &FieldError{name, describe(n), "a non-negative integer"}
		}
		x, err := strconv.ParseUint(n.Value, 0, 64)
		if err != nil {
			return &FieldError{name, describe(n), "a non-negative integer below 2^64"}
		}
		f.SetUint(x)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return &FieldError{name, describe(n), "true or false"}
		}
		f.SetBool(n.Value == "true")
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			return &FieldError{name, describe(n), "a string"}
		}
		f.SetString(n.Value)
	default:
		return fmt.Errorf("config: field %s: unsupported Go kind %s", name, f.Kind())
	}
	return nil
}

func fieldIndex(t reflect.Type, key string) int {
	for i := 0; i < t.NumField(); i++ {
		if strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0] == key {
			return i
		}
	}
	return -1
}

func knownFields(t reflect.Type) []string {
	out := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		out = append(out, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
	}
	return out
}

// describe renders a YAML node as the value an error message quotes.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" {
			return strconv.Quote(n.Value)
		}
		return n.Value
	case yaml.MappingNode:
		return "(a mapping)"
	case yaml.SequenceNode:
		return "(a list)"
	case yaml.AliasNode:
		return "(an alias)"
	default:
		return "(empty)"
	}
}
