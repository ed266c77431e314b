package wire

import (
	"math/rand/v2"
	"testing"
)

// benchPackets are the shapes the benchmarks run on (default configuration).
func benchPackets() []struct {
	name string
	p    *Packet
} {
	prm := DefaultParams()
	return []struct {
		name string
		p    *Packet
	}{
		{"write_ipv4_64B", basePacket(OpWrite, 4, false, 64, prm)},
		{"write_ipv6_vlan_4096B", basePacket(OpWrite, 6, true, prm.MTU, prm)},
		{"send_ipv4_1024B", basePacket(OpSend, 4, false, 1024, prm)},
		{"ack_ipv4_sack256", basePacket(OpAck, 4, false, 0, prm)},
		{"nak_ipv6", basePacket(OpNak, 6, false, 0, prm)},
	}
}

func BenchmarkEncode(b *testing.B) {
	prm := DefaultParams()
	for _, bp := range benchPackets() {
		b.Run(bp.name, func(b *testing.B) {
			f, err := Encode(bp.p, prm)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(f)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(bp.p, prm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("random_mix", func(b *testing.B) {
		pkts := randomMix(prm)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := Encode(pkts[i%len(pkts)], prm); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	prm := DefaultParams()
	for _, bp := range benchPackets() {
		b.Run(bp.name, func(b *testing.B) {
			f, err := Encode(bp.p, prm)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(f)))
			b.ReportAllocs()
			for b.Loop() {
				if _, r := Decode(f, prm); r != DropNone {
					b.Fatal(r)
				}
			}
		})
	}
	b.Run("random_mix", func(b *testing.B) {
		var frames [][]byte
		for _, p := range randomMix(prm) {
			f, err := Encode(p, prm)
			if err != nil {
				b.Fatal(err)
			}
			frames = append(frames, f)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, r := Decode(frames[i%len(frames)], prm); r != DropNone {
				b.Fatal(r)
			}
			i++
		}
	})
	b.Run("drop_bad_icrc_4096B", func(b *testing.B) {
		f, err := Encode(basePacket(OpWrite, 4, false, prm.MTU, prm), prm)
		if err != nil {
			b.Fatal(err)
		}
		f[len(f)-1] ^= 1
		b.SetBytes(int64(len(f)))
		b.ReportAllocs()
		for b.Loop() {
			if _, r := Decode(f, prm); r != DropBadICRC {
				b.Fatal(r)
			}
		}
	})
}

// randomMix is a fixed set of RandomPacket packets (payloads 0..MTU, all opcodes).
func randomMix(prm Params) []*Packet {
	rng := rand.New(rand.NewPCG(3, 4))
	pkts := make([]*Packet, 256)
	for i := range pkts {
		pkts[i] = RandomPacket(rng, prm)
	}
	return pkts
}
