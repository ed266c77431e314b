// Package cli is the mrgen command line: a cobra tree whose commands share the global
// --config, --json and -v flags and one error-to-exit-status policy:
//
//	0  success
//	1  failure or mismatch (a check failed, cosim diverged, a tool failed)
//	2  usage or configuration error
//
// Errors go to stderr as one line. With --json, stdout carries exactly one JSON object, on
// failure too: {"error": ..., "exit_code": ...} with the field, value and allowed range of a
// configuration error.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/internal/version"
)

// Version is the generator version with the commit the binary was built from, stamped into
// banners and manifests (internal/version).
var Version = version.String()

// Exit statuses.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitUsage    = 2
	defaultCfgFn = "configs/default.yaml"
)

// usageError marks errors that are the user's invocation (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// globals are the flags every command shares.
type globals struct {
	configPath string
	json       bool
	verbose    bool
	stdout     io.Writer
	stderr     io.Writer
	// emitted is set once the run's JSON object is on stdout (a failure found after it, such as
	// a cosim mismatch, is already in that object).
	emitted bool
}

// loadConfig resolves --config.
func (g *globals) loadConfig() (config.Config, error) {
	return config.Load(g.configPath)
}

// emitJSON writes v as the single JSON object of a --json run.
func (g *globals) emitJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON result: %w", err)
	}
	g.emitted = true
	return nil
}

// jsonError is the one JSON object a --json run prints on stdout when it fails.
type jsonError struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	// Field, Value and Allowed name the configuration field at fault, when one is.
	Field   string `json:"field,omitempty"`
	Value   string `json:"value,omitempty"`
	Allowed string `json:"allowed,omitempty"`
}

// wantsJSON says whether the run asked for --json, from the parsed flag or, when flag parsing
// itself failed, from the arguments.
func wantsJSON(g *globals, args []string) bool {
	if g.json {
		return true
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// Main runs the CLI and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	msg := oneLine(err.Error())
	fmt.Fprintln(stderr, "mrgen: "+msg)
	code := ExitFailure
	var ue *usageError
	if errors.Is(err, config.ErrConfig) || errors.As(err, &ue) {
		code = ExitUsage
	}
	if wantsJSON(g, args) && !g.emitted {
		je := jsonError{Error: msg, ExitCode: code}
		var fe *config.FieldError
		if errors.As(err, &fe) {
			je.Field, je.Value, je.Allowed = fe.Field, fe.Value, fe.Allowed
		}
		if jerr := g.emitJSON(je); jerr != nil {
			fmt.Fprintln(stderr, "mrgen: "+jerr.Error())
		}
	}
	return code
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		// Multi-line tool output belongs in logs; the error line keeps the first line and
		// says how much was cut.
		return s[:i] + fmt.Sprintf(" (+%d more lines; rerun with -v)", strings.Count(s[i:], "\n"))
	}
	return s
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "mrgen",
		Short:         "Generate, co-simulate and build the MetaRoCE NIC datapath",
		Long:          "mrgen turns a MetaRoCE NIC datapath configuration into synthesizable Verilog,\nproves it equal to a Go golden model by Verilator co-simulation, and builds it for FPGAs.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("unknown command %q; run 'mrgen --help' for the list", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", defaultCfgFn, "configuration file (YAML)")
	pf.BoolVar(&g.json, "json", false, "print exactly one JSON object on stdout")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "verbose progress on stderr")
	root.AddCommand(newVersionCmd(g), newConfigCmd(g))
	for _, add := range extraCommands {
		root.AddCommand(add(g))
	}
	return root
}

// extraCommands lets each command file register itself.
var extraCommands []func(*globals) *cobra.Command

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the mrgen version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json {
				return g.emitJSON(map[string]string{"version": Version, "commit": version.Commit()})
			}
			fmt.Fprintf(g.stdout, "mrgen %s\n", Version)
			return nil
		},
	}
}
