package sender

import (
	"errors"
	"fmt"
)

// A Call is one call on a Sender with its arguments and, once applied, what it returned. A
// sequence of calls is the send side's log: golden/transport reports every call its NICs make,
// and the send engine's co-simulations (the block's stimulus and the closed loop's replay)
// give the RTL the same sequence and compare its answers with the results recorded here.

// Op names a Sender method.
type Op uint8

// The methods a NIC calls.
const (
	OpPost      Op = iota // PostWork
	OpDoorbell            // Doorbell
	OpNext                // Next
	OpTakeWakes           // TakeWakes
	OpWoke                // Woke
	OpLeft                // Left
	OpAck                 // Ack
	OpNak                 // Nak
	OpRetry               // Retry
	OpArm                 // Arm
	OpScan                // Scan
	OpRearm               // Rearm
)

var opNames = [...]string{"post", "doorbell", "next", "take-wakes", "woke", "left", "ack", "nak", "retry", "arm", "scan", "rearm"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Call is one call and its result. Now is on the sender's clock (ticks).
type Call struct {
	Op  Op
	Now uint64
	// Arguments.
	Work WorkRequest // Post
	Conn int         // Doorbell
	Ref  Ref         // Left
	Ack  AckIn       // Ack
	Nak  NakIn       // Nak
	Time uint64      // Woke: the wake-up's time
	// Results.
	Full   bool   // Post: the ring refused the request (ErrQueueFull)
	Packet Packet // Next, when OK
	OK     bool   // Next: a packet; Nak: a retry queued; Arm, Rearm: a scan scheduled
	Done   []Done // Ack
	At     uint64 // Nak: the retry's due time; Arm, Rearm: the scan's time
	Wakes  []uint64
	Err    string // the call's error (ids out of range), if any
	// After the call: the earliest pending timer (NextTimer), what tx_engine's m_timer_at shows
	// once it has answered.
	Timer   uint64
	TimerOK bool
}

// Args is the call with its results cleared: what a replay gives another sender.
func (c Call) Args() Call {
	return Call{Op: c.Op, Now: c.Now, Work: c.Work, Conn: c.Conn, Ref: c.Ref, Ack: c.Ack, Nak: c.Nak, Time: c.Time}
}

// Apply makes the call on s and fills in its results (a full ring is a result, Full, not an
// error).
func (c *Call) Apply(s *Sender) {
	var err error
	switch c.Op {
	case OpPost:
		err = s.PostWork(c.Now, c.Work)
		if errors.Is(err, ErrQueueFull) {
			c.Full, err = true, nil
		}
	case OpDoorbell:
		err = s.Doorbell(c.Now, c.Conn)
	case OpNext:
		c.Packet, c.OK = s.Next(c.Now)
	case OpTakeWakes:
		c.Wakes = s.TakeWakes()
	case OpWoke:
		s.Woke(c.Time)
	case OpLeft:
		s.Left(c.Now, c.Ref)
	case OpAck:
		c.Done, err = s.Ack(c.Now, c.Ack)
	case OpNak:
		c.At, c.OK, err = s.Nak(c.Now, c.Nak)
	case OpRetry:
		s.Retry(c.Now)
	case OpArm:
		c.At, c.OK = s.Arm(c.Now)
	case OpScan:
		s.Scan(c.Now)
	case OpRearm:
		c.At, c.OK = s.Rearm()
	default:
		err = fmt.Errorf("sender: unknown call %v", c.Op)
	}
	if err != nil {
		c.Err = err.Error()
	}
	c.Timer, c.TimerOK = s.NextTimer()
}

// Replay gives s the calls of log in order and returns them with s's results (the arguments
// are log's).
func Replay(s *Sender, log []Call) []Call {
	out := make([]Call, len(log))
	for i, c := range log {
		r := c.Args()
		r.Apply(s)
		out[i] = r
	}
	return out
}

// String renders the call's arguments, for mismatch reports.
func (c Call) String() string {
	switch c.Op {
	case OpPost:
		return fmt.Sprintf("PostWork at %d: conn %d stream %d op %v len %d id %d", c.Now, c.Work.Conn, c.Work.Stream,
			c.Work.Op, c.Work.Len, c.Work.ID)
	case OpDoorbell:
		return fmt.Sprintf("Doorbell at %d: conn %d", c.Now, c.Conn)
	case OpLeft:
		return fmt.Sprintf("Left at %d: %+v", c.Now, c.Ref)
	case OpWoke:
		return fmt.Sprintf("Woke at %d: %d", c.Now, c.Time)
	case OpAck:
		a := c.Ack
		return fmt.Sprintf("ACK at %d: conn %d path %d cum %d sacked %d ecn %d ts %d hint %d", c.Now, a.Conn, a.Path,
			a.Cum, a.Bitmap.Count(), a.ECN, a.TSEcho, a.Hint)
	case OpNak:
		return fmt.Sprintf("NAK at %d: %+v", c.Now, c.Nak)
	}
	return fmt.Sprintf("%v at %d", c.Op, c.Now)
}
