package gen

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/hdl"
)

const leafTemplate = "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\nmodule {% .M.Name %} (\n" +
	"{%- $n := len .M.Ports %}{% range $i, $p := .M.Ports %}\n{% portDecl $p (eq (add1 $i) $n) %}{% end %}\n);\n" +
	"{% if .D %}{% memory .M \"tab\" (dict \"we\" \"a[0]\" \"waddr\" \"a[3:0]\" \"wdata\" \"a\" \"re\" \"1'b1\" \"raddr\" \"a[3:0]\" \"rdata\" \"y\") %}\n" +
	"{% else %}  assign y = a;\n{% end %}endmodule\n\n`resetall\n"

const parentTemplate = "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\nmodule {% .M.Name %} (\n" +
	"{%- $n := len .M.Ports %}{% range $i, $p := .M.Ports %}\n{% portDecl $p (eq (add1 $i) $n) %}{% end %}\n);\n" +
	"  leaf u_a (\n    .clk(clk),\n    .a(a),\n    .y(y)\n  );\nendmodule\n\n`resetall\n"

func leaf(instantiate bool) Source {
	m := &hdl.Module{Name: "leaf", Source: "gen/memories_test.go", Doc: "leaf", Clock: "clk",
		Ports:  []hdl.Port{hdl.In("clk", 1, "clock"), hdl.In("a", 16, "in"), hdl.Out("y", 16, "out")},
		Tables: []hdl.Table{{Name: "tab", Depth: 16, Width: 16, Doc: "a table"}}}
	return Source{Module: m, Template: leafTemplate, Data: instantiate}
}

func parent() Source {
	m := &hdl.Module{Name: "parent", Source: "gen/memories_test.go", Doc: "parent", Clock: "clk",
		Ports: []hdl.Port{hdl.In("clk", 1, "clock"), hdl.In("a", 16, "in"), hdl.Out("y", 16, "out")}}
	return Source{Module: m, Template: parentTemplate}
}

func TestMemoryListWalksTheHierarchy(t *testing.T) {
	d, err := Build("parent", []Source{leaf(true), parent()}, testStamp)
	require.NoError(t, err)
	require.Equal(t, []string{"mrgen_ram_1r1w_16x16", "leaf", "parent"}, d.Modules, "memory modules come first")
	require.Len(t, d.Memories.Instances, 1)
	mi := d.Memories.Instances[0]
	require.Equal(t, "parent.u_a.u_tab", mi.Path)
	require.Equal(t, MemoryInstance{Path: "parent.u_a.u_tab", Module: "mrgen_ram_1r1w_16x16", Block: "leaf", Table: "tab",
		Kind: "ram", Depth: 16, Width: 16, AddrWidth: 4, Ports: "1R1W", ReadLatency: 1, ReadDuringWrite: "old", Bits: 256,
		Implementation: "flops", Doc: "a table", Modules: []string{"parent", "leaf"}}, mi)
	var found bool
	for _, f := range d.Files {
		if f.Path == "memories.json" {
			found = true
			var ml MemoryList
			require.NoError(t, json.Unmarshal(f.Content, &ml))
			require.Equal(t, 256, ml.Bits)
			require.Equal(t, 256, ml.FlopBits)
		}
	}
	require.True(t, found, "memories.json is written")
}

func TestEveryTableIsInstantiatedAndNoArrayInline(t *testing.T) {
	_, err := Build("leaf", []Source{leaf(false)}, testStamp)
	require.ErrorContains(t, err, "declares table tab but does not instantiate it")

	inline := tinySource("mid")
	inline.Template = "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\nmodule {% .M.Name %} (\n" +
		"{%- $n := len .M.Ports %}{% range $i, $p := .M.Ports %}\n{% portDecl $p (eq (add1 $i) $n) %}{% end %}\n);\n" +
		"  reg [3:0] store [0:3];\n  assign y = a;\nendmodule\n\n`resetall\n"
	_, err = Build("tiny", []Source{inline}, testStamp)
	require.ErrorContains(t, err, "declares a reg array inline")
}

func TestMemoriesUnderAModule(t *testing.T) {
	d, err := Build("parent", []Source{leaf(true), parent()}, testStamp)
	require.NoError(t, err)
	require.Len(t, d.Memories.Under("leaf"), 1)
	require.Len(t, d.Memories.Under("parent"), 1)
	require.Empty(t, d.Memories.Under("other"))
}

func TestSubtreeBytesCountsEveryInstance(t *testing.T) {
	d, err := Build("parent", []Source{leaf(true), parent()}, testStamp)
	require.NoError(t, err)
	require.Greater(t, d.SubtreeBytes("parent"), d.SubtreeBytes("leaf"))
	require.Greater(t, d.SubtreeBytes("leaf"), d.SubtreeBytes("mrgen_ram_1r1w_16x16"))
}

func TestSubtreeDigestIgnoresTheBanner(t *testing.T) {
	a, err := Build("parent", []Source{leaf(true), parent()}, testStamp)
	require.NoError(t, err)
	other := testStamp
	other.ConfigName, other.ConfigHash = "y", "def"
	b, err := Build("parent", []Source{leaf(true), parent()}, other)
	require.NoError(t, err)
	require.Equal(t, a.SubtreeDigest("parent"), b.SubtreeDigest("parent"))
	require.NotEqual(t, a.SubtreeDigest("parent"), a.SubtreeDigest("leaf"))
}
