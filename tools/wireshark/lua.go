// Package wireshark renders metaroce.lua, the Wireshark dissector of mrgen's MetaRoCE wire
// format (docs/wire-format.md), from golden/wire's constants: every offset, length, opcode,
// flag, NAK code and unit in the Lua file is a value of golden/wire, so the dissector cannot
// drift from the codec. `go generate ./tools/wireshark` rewrites the committed copy, and
// TestCommittedLuaIsCurrent fails when it differs from what Lua renders.
package wireshark

//go:generate go run ./genlua -o metaroce.lua

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/mrgen/mrgen/config"
	"github.com/mrgen/mrgen/golden/wire"
)

// LuaFile is the dissector's file name in this directory.
const LuaFile = "metaroce.lua"

// named is a value with its name, for the Lua value-string tables.
type named struct {
	Value int
	Name  string
}

// flag is one BTH flag bit.
type flag struct {
	Field, Name string
	Mask        int
}

// maskByte is one variant field byte of the ICRC: its offset from the IP header and the bits
// set to one.
type maskByte struct{ Off, Mask int }

// luaData is everything the template reads.
type luaData struct {
	Port      int
	Opcodes   []named
	NakCodes  []named
	Flags     []flag
	W         map[string]int // golden/wire constants by name
	ICRCMask4 []maskByte     // golden/wire.ICRCMask over an IPv4 header (no options) and UDP
	ICRCMask6 []maskByte     // and over an IPv6 header and UDP
}

// icrcMask lists wire.ICRCMask's non-zero bytes over an IP header of ipLen bytes and the UDP
// header behind it.
func icrcMask(v6 bool, ipLen int) []maskByte {
	var out []maskByte
	for off := 0; off < ipLen+wire.UDPHeaderLen; off++ {
		if m := wire.ICRCMask(v6, ipLen, off); m != 0 {
			out = append(out, maskByte{off, int(m)})
		}
	}
	return out
}

// Lua renders the dissector, registered by default on the UDP destination port of
// config.Default() (configs/default.yaml's udp_dest_port; a dissector preference changes it).
func Lua() ([]byte, error) {
	d := luaData{Port: config.Default().UDPDestPort,
		ICRCMask4: icrcMask(false, wire.IPv4HeaderLen), ICRCMask6: icrcMask(true, wire.IPv6HeaderLen)}
	for _, op := range wire.AllOpcodes() {
		d.Opcodes = append(d.Opcodes, named{int(op), op.String()})
	}
	for _, c := range wire.AllNakCodes() {
		d.NakCodes = append(d.NakCodes, named{int(c), c.String()})
	}
	for _, f := range []struct {
		bit  wire.Flags
		name string
	}{{wire.FlagFirst, "first"}, {wire.FlagLast, "last"}, {wire.FlagAckReq, "ackreq"}, {wire.FlagRetx, "retx"}, {wire.FlagPathInit, "init"}} {
		if f.bit.String() == "" {
			return nil, fmt.Errorf("wireshark: flag %#x has no name", uint8(f.bit))
		}
		d.Flags = append(d.Flags, flag{Field: f.name, Name: f.bit.String(), Mask: int(f.bit)})
	}
	d.W = map[string]int{
		"EthHeaderLen": wire.EthHeaderLen, "IPv4HeaderLen": wire.IPv4HeaderLen, "IPv6HeaderLen": wire.IPv6HeaderLen,
		"UDPHeaderLen": wire.UDPHeaderLen,
		"BTHLen":       wire.BTHLen, "BTHOpcodeOff": wire.BTHOpcodeOff, "BTHFlagsOff": wire.BTHFlagsOff,
		"BTHConnIDOff": wire.BTHConnIDOff, "BTHPathIDOff": wire.BTHPathIDOff, "BTHStreamIDOff": wire.BTHStreamIDOff,
		"BTHVersionOff": wire.BTHVersionOff, "BTHReservedOff": wire.BTHReservedOff, "BTHPSNOff": wire.BTHPSNOff,
		"BTHMSNOff": wire.BTHMSNOff, "BTHVersion": wire.BTHVersion,
		"ConnIDBytes": wire.ConnIDBits / 8, "PathIDBytes": wire.PathIDBits / 8, "StreamIDBytes": wire.StreamIDBits / 8,
		"PSNBytes": wire.PSNBits / 8, "MSNBytes": wire.MSNBits / 8,
		"DataFlagsMask":    int(wire.DataFlagsMask),
		"DataTimestampOff": wire.DataTimestampOff, "DataMsgLenOff": wire.DataMsgLenOff,
		"TimestampBytes": wire.TimestampBits / 8, "MsgLenBytes": wire.MsgLenBits / 8,
		"WriteExtLen": wire.WriteExtLen, "WriteRKeyOff": wire.WriteRKeyOff, "WriteVAOff": wire.WriteVAOff,
		"RKeyBytes": wire.RKeyBits / 8, "VABytes": wire.VABits / 8,
		"SendExtLen": wire.SendExtLen, "SendMsgOffsetOff": wire.SendMsgOffsetOff, "MsgOffsetBytes": wire.MsgOffsetBits / 8,
		"AckFixedLen": wire.AckFixedLen, "AckTimestampEchoOff": wire.AckTimestampEchoOff, "AckECNEchoOff": wire.AckECNEchoOff,
		"AckRateHintOff": wire.AckRateHintOff, "AckSackOff": wire.AckSackOff, "SackWordBytes": wire.SackWordBits / 8,
		"TimestampEchoBytes": wire.TimestampEchoBits / 8, "ECNEchoBytes": wire.ECNEchoBits / 8, "RateHintBytes": wire.RateHintBits / 8,
		"NakLen": wire.NakLen, "NakCodeOff": wire.NakCodeOff, "NakReservedOff": wire.NakReservedOff,
		"NakRNRDelayOff": wire.NakRNRDelayOff, "NakTimestampEchoOff": wire.NakTimestampEchoOff,
		"NakCodeBytes": wire.NakCodeBits / 8, "NakReservedBytes": wire.NakReservedBits / 8, "RNRDelayBytes": wire.RNRDelayBits / 8,
		"AnnounceLen": wire.AnnounceLen, "AnnounceTimestampOff": wire.AnnounceTimestampOff,
		"AnnounceReservedOff": wire.AnnounceReservedOff, "AnnounceReservedBytes": wire.AnnounceReservedBits / 8,
		"ICRCLen": wire.ICRCLen,
		"OpWrite": int(wire.OpWrite), "OpSend": int(wire.OpSend), "OpAck": int(wire.OpAck), "OpNak": int(wire.OpNak),
		"OpAnnounce":       int(wire.OpAnnounce),
		"RateHintUnitMbps": wire.RateHintUnitMbps, "TimestampUnitNS": wire.TimestampUnitNS, "RNRDelayUnitUS": wire.RNRDelayUnitUS,
	}
	t, err := template.New(LuaFile).Option("missingkey=error").Funcs(template.FuncMap{
		"hex": func(v int) string { return fmt.Sprintf("0x%02x", v) },
	}).Parse(luaTemplate)
	if err != nil {
		return nil, fmt.Errorf("wireshark: template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("wireshark: render %s: %w", LuaFile, err)
	}
	return b.Bytes(), nil
}
