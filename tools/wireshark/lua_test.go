package wireshark

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
	"github.com/mrgen/mrgen/internal/pcapout"
	"github.com/mrgen/mrgen/internal/tooltest"
)

func TestCommittedLuaIsCurrent(t *testing.T) {
	want, err := Lua()
	require.NoError(t, err)
	got, err := os.ReadFile(LuaFile)
	require.NoError(t, err)
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from what golden/wire's constants render; run `go generate ./tools/wireshark` and commit it:\n%s",
			LuaFile, cmp.Diff(string(want), string(got)))
	}
}

func TestDefaultPortIsDefaultYAML(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "..", "configs", "default.yaml"))
	require.NoError(t, err)
	require.Equal(t, config.Default().UDPDestPort, c.UDPDestPort)
	lua, err := Lua()
	require.NoError(t, err)
	require.Contains(t, string(lua), fmt.Sprintf(`Pref.uint("UDP destination port", %d,`, c.UDPDestPort))
}

// expectField renders what tshark -T fields prints for one dissector field of a packet ("" when
// the field is absent). Hex fields print as 0x with the field's width, booleans as 0/1, byte
// strings as plain hex, repeated fields joined by commas.
type expectField struct {
	name string
	want func(p *wire.Packet, frame []byte) string
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

func dataOnly(f func(p *wire.Packet) string) func(*wire.Packet, []byte) string {
	return func(p *wire.Packet, _ []byte) string {
		if !p.BTH.Opcode.IsData() {
			return ""
		}
		return f(p)
	}
}

func flagBit(bit wire.Flags) func(*wire.Packet, []byte) string {
	return func(p *wire.Packet, _ []byte) string {
		return map[bool]string{true: "1", false: "0"}[p.BTH.Flags&bit != 0]
	}
}

var fields = []expectField{
	{"metaroce.bth.opcode", func(p *wire.Packet, _ []byte) string { return fmt.Sprintf("0x%02x", uint8(p.BTH.Opcode)) }},
	{"metaroce.bth.flags", func(p *wire.Packet, _ []byte) string { return fmt.Sprintf("0x%02x", uint8(p.BTH.Flags)) }},
	{"metaroce.bth.flags.first", flagBit(wire.FlagFirst)},
	{"metaroce.bth.flags.last", flagBit(wire.FlagLast)},
	{"metaroce.bth.flags.ackreq", flagBit(wire.FlagAckReq)},
	{"metaroce.bth.flags.retx", flagBit(wire.FlagRetx)},
	{"metaroce.bth.flags.init", flagBit(wire.FlagPathInit)},
	{"metaroce.bth.flags.reserved", func(p *wire.Packet, _ []byte) string { return "0x00" }},
	{"metaroce.bth.conn_id", func(p *wire.Packet, _ []byte) string { return u(uint64(p.BTH.ConnID)) }},
	{"metaroce.bth.path_id", func(p *wire.Packet, _ []byte) string { return u(uint64(p.BTH.PathID)) }},
	{"metaroce.bth.stream_id", func(p *wire.Packet, _ []byte) string { return u(uint64(p.BTH.StreamID)) }},
	{"metaroce.bth.version", func(p *wire.Packet, _ []byte) string { return u(wire.BTHVersion) }},
	{"metaroce.bth.psn", func(p *wire.Packet, _ []byte) string { return u(uint64(p.BTH.PSN)) }},
	{"metaroce.bth.msn", func(p *wire.Packet, _ []byte) string { return u(uint64(p.BTH.MSN)) }},
	{"metaroce.data.timestamp", dataOnly(func(p *wire.Packet) string {
		if p.Write != nil {
			return u(uint64(p.Write.Timestamp))
		}
		return u(uint64(p.Send.Timestamp))
	})},
	{"metaroce.data.msg_len", dataOnly(func(p *wire.Packet) string {
		if p.Write != nil {
			return u(uint64(p.Write.MsgLen))
		}
		return u(uint64(p.Send.MsgLen))
	})},
	{"metaroce.write.rkey", func(p *wire.Packet, _ []byte) string {
		if p.Write == nil {
			return ""
		}
		return fmt.Sprintf("0x%08x", p.Write.RKey)
	}},
	{"metaroce.write.va", func(p *wire.Packet, _ []byte) string {
		if p.Write == nil {
			return ""
		}
		return fmt.Sprintf("0x%016x", p.Write.VA)
	}},
	{"metaroce.send.offset", func(p *wire.Packet, _ []byte) string {
		if p.Send == nil {
			return ""
		}
		return u(uint64(p.Send.Offset))
	}},
	{"metaroce.payload_len", dataOnly(func(p *wire.Packet) string { return u(uint64(len(p.Payload))) })},
	{"metaroce.payload", func(p *wire.Packet, _ []byte) string { return hex.EncodeToString(p.Payload) }},
	{"metaroce.ack.timestamp_echo", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		return u(uint64(p.Ack.TimestampEcho))
	}},
	{"metaroce.ack.ecn_echo", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		return u(uint64(p.Ack.ECNEcho))
	}},
	{"metaroce.ack.rate_hint", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		return u(uint64(p.Ack.RateHint))
	}},
	{"metaroce.ack.rate_hint_mbps", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		return u(uint64(p.Ack.RateHint) * wire.RateHintUnitMbps)
	}},
	{"metaroce.ack.sack_width", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		return u(uint64(len(p.Ack.Sack) * wire.SackWordBits))
	}},
	{"metaroce.ack.sack_offset", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		var set []string
		for i := 0; i < len(p.Ack.Sack)*wire.SackWordBits; i++ {
			if p.Ack.SackBit(i) {
				set = append(set, strconv.Itoa(i))
			}
		}
		return strings.Join(set, ",")
	}},
	{"metaroce.ack.sack_psn", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		var set []string
		for i := 0; i < len(p.Ack.Sack)*wire.SackWordBits; i++ {
			if p.Ack.SackBit(i) {
				set = append(set, u(uint64(p.BTH.PSN+uint32(i))))
			}
		}
		return strings.Join(set, ",")
	}},
	{"metaroce.ack.sack_count", func(p *wire.Packet, _ []byte) string {
		if p.Ack == nil {
			return ""
		}
		n := 0
		for i := 0; i < len(p.Ack.Sack)*wire.SackWordBits; i++ {
			if p.Ack.SackBit(i) {
				n++
			}
		}
		return strconv.Itoa(n)
	}},
	{"metaroce.nak.code", func(p *wire.Packet, _ []byte) string {
		if p.Nak == nil {
			return ""
		}
		return u(uint64(p.Nak.Code))
	}},
	{"metaroce.nak.rnr_delay", func(p *wire.Packet, _ []byte) string {
		if p.Nak == nil {
			return ""
		}
		return u(uint64(p.Nak.RNRDelay))
	}},
	{"metaroce.nak.timestamp_echo", func(p *wire.Packet, _ []byte) string {
		if p.Nak == nil {
			return ""
		}
		return u(uint64(p.Nak.TimestampEcho))
	}},
	{"metaroce.icrc", func(_ *wire.Packet, frame []byte) string {
		return fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(frame[len(frame)-wire.ICRCLen:])) // no padding: no valid frame has any
	}},
	{"metaroce.icrc.computed", func(_ *wire.Packet, frame []byte) string {
		v, err := wire.ICRC(frame)
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("0x%08x", v)
	}},
	{"metaroce.icrc.status", func(_ *wire.Packet, frame []byte) string {
		if wire.CheckICRC(frame) != nil {
			return "2"
		}
		return "1"
	}},
}

// vector is one frame of the tshark test and the packet it must decode to.
type vector struct {
	name  string
	p     *wire.Packet
	frame []byte
}

// vectors draws random packets until every opcode has perOp of them, for each set of Params,
// and adds the edge cases: a source port Wireshark gives to DNS, and a corrupted frame.
func vectors(t *testing.T, perOp int) []vector {
	t.Helper()
	small := wire.Params{UDPDestPort: uint16(config.Default().UDPDestPort), PSNWidth: 16, SackWidth: 64, MTU: 256,
		Connections: 2, PathsPerConnection: 4, StreamsPerConnection: 2}
	big := wire.DefaultParams()
	big.SackWidth = 1024
	var out []vector
	for pi, prm := range []wire.Params{wire.DefaultParams(), small, big} {
		require.NoError(t, prm.Validate())
		rng := rand.New(rand.NewPCG(uint64(pi), 42))
		count := map[wire.Opcode]int{}
		for len(count) < len(wire.AllOpcodes()) || minCount(count) < perOp {
			p := wire.RandomPacket(rng, prm)
			if count[p.BTH.Opcode] >= perOp {
				continue
			}
			count[p.BTH.Opcode]++
			frame, err := wire.Encode(p, prm)
			require.NoError(t, err)
			out = append(out, vector{fmt.Sprintf("params %d %s #%d", pi, p.BTH.Opcode, count[p.BTH.Opcode]), p, frame})
		}
	}
	prm := wire.DefaultParams()
	rng := rand.New(rand.NewPCG(7, 7))
	dns := wire.RandomPacket(rng, prm)
	dns.UDP.SrcPort = 53
	frame, err := wire.Encode(dns, prm)
	require.NoError(t, err)
	out = append(out, vector{"source port 53", dns, frame})
	for {
		p := wire.RandomPacket(rng, prm)
		if len(p.Payload) < 2 {
			continue
		}
		frame, err := wire.Encode(p, prm)
		require.NoError(t, err)
		frame[len(frame)-wire.ICRCLen-1] ^= 0x40 // the last payload byte
		p.Payload[len(p.Payload)-1] ^= 0x40
		out = append(out, vector{"corrupted payload", p, frame})
		break
	}
	return out
}

func minCount(m map[wire.Opcode]int) int {
	n := -1
	for _, v := range m {
		if n < 0 || v < n {
			n = v
		}
	}
	return n
}

// TestTsharkDecodesEveryField writes frames of every opcode to a pcap, has tshark decode them
// with metaroce.lua and compares every field with the Go packet it was encoded from.
func TestTsharkDecodesEveryField(t *testing.T) {
	tooltest.Require(t, "tshark")
	vs := vectors(t, 12)
	path := filepath.Join(t.TempDir(), "vectors.pcap")
	w, err := pcapout.Create(path, pcapout.Options{})
	require.NoError(t, err)
	for i, v := range vs {
		require.NoError(t, w.Write(pcapout.Frame{PS: uint64(i) * 10_000, Data: v.frame}))
	}
	require.NoError(t, w.Close())

	args := []string{"-o", "udp.try_heuristic_first:TRUE", "-X", "lua_script:" + LuaFile, "-r", path,
		"-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "_ws.col.Protocol", "-e", "_ws.col.Info"}
	for _, f := range fields {
		args = append(args, "-e", f.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tshark", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no personal preferences or plugins
	out, err := cmd.Output()
	require.NoError(t, err, "tshark: %s", stderr.String())
	require.NotContains(t, stderr.String(), "Lua", "the dissector must load without Lua errors")
	rows := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	require.Len(t, rows, len(vs))
	for i, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			cols := strings.Split(rows[i], "\t")
			require.Len(t, cols, len(fields)+2)
			require.Equal(t, "MetaRoCE", cols[0])
			// The summary line names the opcode, the NAK code and the flags as golden/wire does.
			info := cols[1]
			require.True(t, strings.HasPrefix(info, v.p.BTH.Opcode.String()+" "), info)
			if v.p.Nak != nil {
				require.Contains(t, info, " "+v.p.Nak.Code.String())
			}
			if v.p.BTH.Flags != 0 {
				require.Contains(t, info, "["+v.p.BTH.Flags.String()+"]")
			}
			want, got := map[string]string{}, map[string]string{}
			for j, f := range fields {
				want[f.name] = f.want(v.p, v.frame)
				got[f.name] = cols[j+2]
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("frame %d (-go +tshark):\n%s", i+1, d)
			}
		})
	}
}

// TestTsharkPortPreference moves the registration to another port: frames to the default port
// are no longer MetaRoCE, frames to the new one are.
func TestTsharkPortPreference(t *testing.T) {
	tooltest.Require(t, "tshark")
	prm := wire.DefaultParams()
	other := prm
	other.UDPDestPort = 6000
	rng := rand.New(rand.NewPCG(3, 3))
	path := filepath.Join(t.TempDir(), "ports.pcap")
	w, err := pcapout.Create(path, pcapout.Options{})
	require.NoError(t, err)
	for i, pr := range []wire.Params{prm, other} {
		p := wire.RandomPacket(rng, pr)
		p.UDP.SrcPort = 50000
		frame, err := wire.Encode(p, pr)
		require.NoError(t, err)
		require.NoError(t, w.Write(pcapout.Frame{PS: uint64(i), Data: frame}))
	}
	require.NoError(t, w.Close())
	cmd := exec.Command("tshark", "-o", "metaroce.udp_port:6000", "-X", "lua_script:"+LuaFile, "-r", path,
		"-T", "fields", "-e", "udp.dstport", "-e", "metaroce.bth.version")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	require.NoError(t, err)
	want := fmt.Sprintf("%d\t\n6000\t%d\n", prm.UDPDestPort, wire.BTHVersion)
	if d := cmp.Diff(want, string(out)); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}
