package window_test

import (
	"os"
	"testing"

	"github.com/mrgen/mrgen/config"
)

func TestDumpDefault(t *testing.T) {
	dir := os.Getenv("WDUMP")
	if dir == "" {
		t.Skip()
	}
	c := config.Default()
	if p := os.Getenv("WCFG"); p != "" {
		var err error
		c, err = config.Load(p)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := build(t, c).Write(dir); err != nil {
		t.Fatal(err)
	}
}
