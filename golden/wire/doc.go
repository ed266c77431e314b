// Package wire is the behavioural truth of mrgen's MetaRoCE packet format: Encode builds frames,
// Decode parses and validates them (returning a DropReason when it refuses one), and ICRC,
// CheckICRC and Reseal handle the invariant CRC. docs/wire-format.md specifies the format; the
// field widths and offsets it names are the constants of this package, and a test keeps the two
// in step.
//
// The format is mrgen's own design following the published MetaRoCE principles, not Meta's
// specification (which is not public): Ethernet (one optional 802.1Q tag), IPv4 without options
// or IPv6 without extension headers, UDP to a configured port with the path's ECMP entropy as
// source port, a 16-byte base transport header (BTH), a Write or Send extension or an ACK or NAK
// body, the payload, and a 4-byte ICRC.
//
// Decode checks in a fixed order and reports the first failing check; the DropReason codes are
// numbered in that order so the parser RTL can reproduce the decision with a priority encoder.
// The round trip is exact in both directions: Decode(Encode(p)) is p, and for every frame Decode
// accepts, Encode(Decode(frame)) is the frame, byte for byte.
//
// Users: golden/parser (and through it the parser RTL cosim), golden/transport and
// golden/fabric (which build and read every packet with Encode and Decode), and the parser and
// deparser cosim traffic (cosim), whose runs the silicon handoff records as golden vectors
// (handoff, docs/handoff.md).
package wire
