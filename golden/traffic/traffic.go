// Package traffic is what the transport experiments share between protocols: the messages an
// application posts, the deterministic bytes each message carries, the ledger that verifies
// every delivered message byte for byte against what its sender wrote, and the per-packet
// bookkeeping that tells a spurious retransmission (the earlier copy had reached the receiver)
// from a needed one. MetaRoCE (golden/transport) and the RoCEv2 baseline (golden/baseline)
// report through the same ledger, so their figures come from one run and one definition.
package traffic

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/wire"
)

// Message is one application message from Src to Dst.
type Message struct {
	ID       uint64 // unique in a run, from 1
	Src, Dst int    // hosts
	Stream   int    // ordered stream of the (Src, Dst) connection
	Op       wire.Opcode
	Len      uint32
	Posted   fabric.Time // when the application posted it
	Sent     fabric.Time // sender completion: every packet acknowledged (0: not yet)
	Received fabric.Time // receiver completion, bytes verified (0: not yet)
}

// Byte is byte off of message id: a fixed function of both, so that a receiver's memory can be
// checked without keeping the sender's buffers.
func Byte(id uint64, off uint32) byte { return byte(word(id, off/8) >> (8 * (off % 8))) }

// word is the 8-byte word w of message id (a splitmix-style hash).
func word(id uint64, w uint32) uint64 {
	x := id*0x9E3779B97F4A7C15 + uint64(w)*0xBF58476D1CE4E5B9
	x ^= x >> 31
	x *= 0x94D049BB133111EB
	x ^= x >> 29
	return x
}

// Fill writes the bytes [off, off+len(buf)) of message id into buf (Byte, one hash per 8 bytes).
func Fill(id uint64, off uint32, buf []byte) {
	i := 0
	for i < len(buf) && (off+uint32(i))%8 != 0 {
		buf[i] = Byte(id, off+uint32(i))
		i++
	}
	for w := (off + uint32(i)) / 8; i+8 <= len(buf); i, w = i+8, w+1 {
		binary.LittleEndian.PutUint64(buf[i:], word(id, w))
	}
	for ; i < len(buf); i++ {
		buf[i] = Byte(id, off+uint32(i))
	}
}

// Ledger records every message of a run and checks each delivery.
type Ledger struct {
	msgs       map[uint64]*Message
	nextID     uint64
	arrived    map[packetKey]bool
	flowPlaced map[[2]int]uint64
	scratch    []byte
	Totals     Totals
}

// Totals are the run-wide counts the experiments report.
type Totals struct {
	Messages                uint64 // posted
	SenderCompleted         uint64
	ReceiverCompleted       uint64 // delivered and verified
	BytesPosted             uint64
	BytesDelivered          uint64 // bytes of verified messages
	BytesPlaced             uint64 // payload bytes written to receiver memory for the first time
	VerifyFailures          uint64
	FirstFailure            string
	DataPackets             uint64 // data packets sent, first copies and retransmissions
	Retransmissions         uint64
	SpuriousRetransmissions uint64 // copies of a packet that reached the receiving NIC after one already had
}

type packetKey struct {
	msg uint64
	pkt uint32
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{msgs: map[uint64]*Message{}, arrived: map[packetKey]bool{}, flowPlaced: map[[2]int]uint64{}}
}

// Post registers a new message and returns it with its ID.
func (l *Ledger) Post(now fabric.Time, src, dst, stream int, op wire.Opcode, n uint32) *Message {
	l.nextID++
	m := &Message{ID: l.nextID, Src: src, Dst: dst, Stream: stream, Op: op, Len: n, Posted: now}
	l.msgs[m.ID] = m
	l.Totals.Messages++
	l.Totals.BytesPosted += uint64(n)
	return m
}

// Message returns a posted message, or nil.
func (l *Ledger) Message(id uint64) *Message { return l.msgs[id] }

// Messages returns every posted message in ID order.
func (l *Ledger) Messages() []*Message {
	out := make([]*Message, 0, len(l.msgs))
	for id := uint64(1); id <= l.nextID; id++ {
		if m := l.msgs[id]; m != nil {
			out = append(out, m)
		}
	}
	return out
}

// SentPacket records a data packet put on the wire: packet pkt of message id, a retransmission
// or the first copy.
func (l *Ledger) SentPacket(id uint64, pkt uint32, retransmission bool) {
	l.Totals.DataPackets++
	if retransmission {
		l.Totals.Retransmissions++
	}
}

// ArrivedPacket records that a copy of packet pkt of message id reached the receiving NIC
// (whatever the receiver then did with it). Every copy after the first is a spurious
// retransmission: the fabric neither duplicates nor forges packets, so a second arrival means
// the sender resent a packet that was not lost (its earlier copy had arrived, or was still in
// flight and arrived later). Needed retransmissions are the others: Retransmissions −
// SpuriousRetransmissions.
func (l *Ledger) ArrivedPacket(id uint64, pkt uint32) {
	k := packetKey{id, pkt}
	if l.arrived[k] {
		l.Totals.SpuriousRetransmissions++
		return
	}
	l.arrived[k] = true
}

// Placed records n payload bytes of message id written to its receiver's memory for the first
// time (a duplicate that rewrites bytes already placed is not counted): goodput and per-flow
// fairness are measured on it.
func (l *Ledger) Placed(id uint64, n int) {
	l.Totals.BytesPlaced += uint64(n)
	if m := l.msgs[id]; m != nil {
		l.flowPlaced[[2]int{m.Src, m.Dst}] += uint64(n)
	}
}

// FlowPlaced is the payload placed so far for the flow from src to dst.
func (l *Ledger) FlowPlaced(src, dst int) uint64 { return l.flowPlaced[[2]int{src, dst}] }

// SenderDone records the sender's completion of a message.
func (l *Ledger) SenderDone(now fabric.Time, id uint64) {
	if m := l.msgs[id]; m != nil && m.Sent == 0 {
		m.Sent = now
		l.Totals.SenderCompleted++
	}
}

// Delivered checks a message the receiver completed: data must be exactly the message's bytes
// as read back from the receiver's memory. A mismatch is counted, remembered and returned.
func (l *Ledger) Delivered(now fabric.Time, id uint64, data []byte) error {
	m := l.msgs[id]
	if m == nil {
		return l.fail(fmt.Errorf("traffic: completion of unknown message %d", id))
	}
	if m.Received != 0 {
		return l.fail(fmt.Errorf("traffic: message %d completed twice", id))
	}
	if uint32(len(data)) != m.Len {
		return l.fail(fmt.Errorf("traffic: message %d (%d->%d stream %d) delivered %d bytes, sent %d", id, m.Src, m.Dst, m.Stream, len(data), m.Len))
	}
	if len(l.scratch) < len(data) {
		l.scratch = make([]byte, len(data))
	}
	want := l.scratch[:len(data)]
	Fill(id, 0, want)
	if !bytes.Equal(data, want) {
		for i, b := range data {
			if b != want[i] {
				return l.fail(fmt.Errorf("traffic: message %d (%d->%d stream %d) byte %d is %#02x, sent %#02x", id, m.Src, m.Dst, m.Stream, i, b, want[i]))
			}
		}
	}
	m.Received = now
	l.Totals.ReceiverCompleted++
	l.Totals.BytesDelivered += uint64(m.Len)
	return nil
}

func (l *Ledger) fail(err error) error {
	l.Totals.VerifyFailures++
	if l.Totals.FirstFailure == "" {
		l.Totals.FirstFailure = err.Error()
	}
	return err
}

// Undelivered lists the messages not (yet) verified at their receiver.
func (l *Ledger) Undelivered() []*Message {
	var out []*Message
	for _, m := range l.Messages() {
		if m.Received == 0 {
			out = append(out, m)
		}
	}
	return out
}

// Host is one protocol's NIC on one host, as the experiment harness drives it.
type Host interface {
	fabric.Endpoint
	// Submit queues a posted message for sending; the connection to m.Dst is set up on first
	// use (out of band, instantly, at both ends).
	Submit(now fabric.Time, m *Message)
	// Counters are the host's protocol counters by name (retransmissions, timeouts, ...).
	Counters() map[string]uint64
}
