package transport

import (
	"errors"
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sender"
)

// The send side's call log. A NIC observed with ObserveSender reports every call it makes on its
// sender (golden/sender), in order, with the arguments and what the call returned: the sequence
// a send engine's RTL is given to decide as golden did, and the answers it is compared with.
// Replay applies a log to a sender (a fresh sender given a NIC's log answers as the NIC's did).

// SenderOp names a golden/sender method.
type SenderOp uint8

// The sender's methods a NIC calls.
const (
	SendPost      SenderOp = iota // PostWork
	SendDoorbell                  // Doorbell
	SendNext                      // Next
	SendTakeWakes                 // TakeWakes
	SendWoke                      // Woke
	SendLeft                      // Left
	SendAck                       // Ack
	SendNak                       // Nak
	SendRetry                     // Retry
	SendArm                       // Arm
	SendScan                      // Scan
	SendRearm                     // Rearm
)

func (o SenderOp) String() string {
	return [...]string{"post", "doorbell", "next", "take-wakes", "woke", "left", "ack", "nak", "retry", "arm", "scan", "rearm"}[o]
}

// SenderCall is one call on the sender and its result. Now is on the sender's clock (ticks).
type SenderCall struct {
	Op  SenderOp
	Now uint64
	// Arguments.
	Work sender.WorkRequest // Post
	Conn int                // Doorbell
	Ref  sender.Ref         // Left
	Ack  sender.AckIn       // Ack
	Nak  sender.NakIn       // Nak
	Time uint64             // Woke: the wake-up's time
	// Results.
	Full   bool          // Post: the ring refused the request (sender.ErrQueueFull)
	Packet sender.Packet // Next, when OK
	OK     bool          // Next: a packet; Nak: a retry queued; Arm, Rearm: a scan scheduled
	Done   []sender.Done // Ack
	At     uint64        // Nak: the retry's due time; Arm, Rearm: the scan's time
	Wakes  []uint64      // TakeWakes
	Err    string        // the call's error (ids out of range), if any
}

// call applies c's arguments to s and fills in its results.
func (c *SenderCall) call(s *sender.Sender) {
	var err error
	switch c.Op {
	case SendPost:
		err = s.PostWork(c.Now, c.Work)
		if errors.Is(err, sender.ErrQueueFull) {
			c.Full, err = true, nil
		}
	case SendDoorbell:
		err = s.Doorbell(c.Now, c.Conn)
	case SendNext:
		c.Packet, c.OK = s.Next(c.Now)
	case SendTakeWakes:
		c.Wakes = s.TakeWakes()
	case SendWoke:
		s.Woke(c.Time)
	case SendLeft:
		s.Left(c.Now, c.Ref)
	case SendAck:
		c.Done, err = s.Ack(c.Now, c.Ack)
	case SendNak:
		c.At, c.OK, err = s.Nak(c.Now, c.Nak)
	case SendRetry:
		s.Retry(c.Now)
	case SendArm:
		c.At, c.OK = s.Arm(c.Now)
	case SendScan:
		s.Scan(c.Now)
	case SendRearm:
		c.At, c.OK = s.Rearm()
	}
	if err != nil {
		c.Err = err.Error()
	}
}

// Replay gives s the calls of log in order and returns them with s's results (the arguments
// are log's).
func Replay(s *sender.Sender, log []SenderCall) []SenderCall {
	out := make([]SenderCall, len(log))
	for i, c := range log {
		r := SenderCall{Op: c.Op, Now: c.Now, Work: c.Work, Conn: c.Conn, Ref: c.Ref, Ack: c.Ack, Nak: c.Nak, Time: c.Time}
		r.call(s)
		out[i] = r
	}
	return out
}

// send makes call c on the NIC's sender and reports it to the tap. It returns c's error.
func (nic *NIC) send(c SenderCall) (SenderCall, error) {
	c.Now = nic.ticks()
	c.call(nic.snd)
	if nic.sendObs != nil {
		nic.sendObs(nic.now(), c)
	}
	if c.Err != "" {
		return c, fmt.Errorf("transport: sender %v: %s", c.Op, c.Err)
	}
	return c, nil
}

// ObserveSender has host h's NIC report every call on its sender to f (nil: none), from the
// next call on.
func (n *Network) ObserveSender(h int, f func(now fabric.Time, c SenderCall)) {
	n.nics[h].sendObs = f
}

// SenderParams are the NIC's sender parameters (its clock's, with its tables' depths).
func (nic *NIC) SenderParams() sender.Params { return nic.snd.Params() }

// SenderCounters are the NIC's sender's event counters.
func (nic *NIC) SenderCounters() sender.Counters { return nic.snd.Counters }
