package wire

import (
	"errors"
	"fmt"

	"github.com/mrgen/mrgen/config"
)

// ErrInvalidParams marks every error about Params that the wire format cannot carry.
var ErrInvalidParams = errors.New("wire: invalid params")

// Params are the configuration values the codec needs. ParamsFrom derives them from the shared
// configuration; tests may build them directly.
type Params struct {
	UDPDestPort          uint16 // UDP destination port of MetaRoCE traffic (config udp_dest_port)
	PSNWidth             int    // significant PSN bits; higher PSN bits must be zero (config psn_width)
	SackWidth            int    // SACK bitmap bits carried in every ACK (config sack_width)
	MTU                  int    // largest payload in bytes after BTH and extension (config mtu)
	Connections          int    // connection ids 0..Connections-1 are valid (config connections)
	PathsPerConnection   int    // path ids 0..PathsPerConnection-1 are valid
	StreamsPerConnection int    // stream ids 0..StreamsPerConnection-1 are valid
}

// Limits of the wire format itself (field capacities). config.Validate applies the product's
// narrower policy ranges; these only make sure every value is representable.
const (
	// MaxMTU keeps the largest data packet's IPv4 total length within 16 bits.
	MaxMTU = 1<<IPv4TotalLengthBits - 1 - IPv4HeaderLen - UDPHeaderLen - BTHLen - WriteExtLen - ICRCLen
	// MaxSackWidth bounds the ACK body to 8 KiB of bitmap.
	MaxSackWidth = 1 << 16
	// SackWordBits is the granule of the SACK width: Ack.Sack is a slice of 64-bit words.
	SackWordBits = 64
)

// ParamsFrom takes the codec's parameters from a configuration (which should have passed
// config.Validate; ParamsFrom does not repeat its policy checks).
func ParamsFrom(c config.Config) Params {
	return Params{
		UDPDestPort:          uint16(c.UDPDestPort),
		PSNWidth:             c.PSNWidth,
		SackWidth:            c.SackWidth,
		MTU:                  c.MTU,
		Connections:          c.Connections,
		PathsPerConnection:   c.PathsPerConnection,
		StreamsPerConnection: c.StreamsPerConnection,
	}
}

// DefaultParams are the parameters of config.Default().
func DefaultParams() Params { return ParamsFrom(config.Default()) }

// Validate checks that every parameter fits the wire format. Every error wraps ErrInvalidParams.
func (prm Params) Validate() error {
	bad := func(field string, v int, allowed string) error {
		return fmt.Errorf("%w: %s = %d, allowed %s", ErrInvalidParams, field, v, allowed)
	}
	switch {
	case prm.UDPDestPort == 0:
		return bad("UDPDestPort", 0, "1..65535")
	case prm.PSNWidth < 1 || prm.PSNWidth > PSNBits:
		return bad("PSNWidth", prm.PSNWidth, fmt.Sprintf("1..%d", PSNBits))
	case prm.SackWidth < SackWordBits || prm.SackWidth > MaxSackWidth || prm.SackWidth%SackWordBits != 0:
		return bad("SackWidth", prm.SackWidth, fmt.Sprintf("a multiple of %d in %d..%d", SackWordBits, SackWordBits, MaxSackWidth))
	case prm.MTU < 1 || prm.MTU > MaxMTU:
		return bad("MTU", prm.MTU, fmt.Sprintf("1..%d", MaxMTU))
	case prm.Connections < 1 || prm.Connections > 1<<ConnIDBits:
		return bad("Connections", prm.Connections, fmt.Sprintf("1..%d", 1<<ConnIDBits))
	case prm.PathsPerConnection < 1 || prm.PathsPerConnection > 1<<PathIDBits:
		return bad("PathsPerConnection", prm.PathsPerConnection, fmt.Sprintf("1..%d", 1<<PathIDBits))
	case prm.StreamsPerConnection < 1 || prm.StreamsPerConnection > 1<<StreamIDBits:
		return bad("StreamsPerConnection", prm.StreamsPerConnection, fmt.Sprintf("1..%d", 1<<StreamIDBits))
	}
	return nil
}

// sackWords is the number of 64-bit words of the SACK bitmap (0 for invalid Params, so that
// Decode stays panic-free whatever it is given).
func (prm Params) sackWords() int {
	if prm.SackWidth < SackWordBits || prm.SackWidth > MaxSackWidth {
		return 0
	}
	return prm.SackWidth / SackWordBits
}

// AckLen is the length in bytes of the ACK body (after BTH, before ICRC) for these Params:
// AckFixedLen + SackWidth/8.
func (prm Params) AckLen() int { return AckFixedLen + prm.sackWords()*SackWordBits/8 }

// MaxFrameLen is the longest valid frame for these Params: a tagged IPv6 frame carrying the
// largest body (a Write extension with an MTU payload, or an ACK, whichever is longer). Decode
// drops longer frames as frame_too_long.
func (prm Params) MaxFrameLen() int {
	body := max(WriteExtLen+max(prm.MTU, 0), SendExtLen+max(prm.MTU, 0), NakLen, prm.AckLen())
	return maxL2L3Len + UDPHeaderLen + BTHLen + body + ICRCLen
}
