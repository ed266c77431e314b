package transport

import (
	"github.com/mrgen/mrgen/golden/sender"
	"github.com/mrgen/mrgen/golden/traffic"
	"github.com/mrgen/mrgen/golden/wire"
)

// The host's side of sending: work requests and their local buffers.
//
// Each (connection, stream) has a ring of WorkDepth send buffers at this host, one per slot of
// the sender's work-request ring: the k-th message posted on the stream is read from buffer k
// mod WorkDepth, at localAddr (its bytes are traffic.Byte(message id, offset), so the model
// keeps no copy; a closed loop's host writes them there when the sender accepts the request: a
// post its call log shows not refused).
// A buffer is rewritten only when its ring slot is reposted, after its message completed. The
// k-th message is also the stream's MSN k, so the host knows the receiver's buffer of a WRITE
// when it posts it.

// localAddr is the send buffer of the k-th message posted on stream s of connection c.
func (nic *NIC) localAddr(c, s int, k uint32) uint64 {
	return nic.nw.ringSlot(localBase, nic.snd.Params().WorkDepth, c, s, k)
}

// workRequest is the work request of message m on stream s of cn, the next one posted there.
func (nic *NIC) workRequest(cn *conn, s int, m *traffic.Message) sender.WorkRequest {
	seq := cn.posted[s]
	wr := sender.WorkRequest{Conn: cn.idx, Stream: s, Op: m.Op, Len: m.Len, ID: m.ID, Local: nic.localAddr(cn.idx, s, seq)}
	if m.Op == wire.OpWrite {
		peerConn := ConnIndex(cn.peer, nic.host)
		wr.RemoteVA = nic.nw.slotAddr(writeBase, peerConn, s, seq)
		wr.RKey = nic.nw.nics[cn.peer].conns[peerConn].rkeyAt
	}
	return wr
}

// post hands wr to the sender, or to the backlog of its stream when the sender's ring is full
// (or earlier requests wait there already).
func (nic *NIC) post(cn *conn, wr sender.WorkRequest) error {
	s := wr.Stream
	if len(cn.backlog[s]) == 0 {
		c, err := nic.send(sender.Call{Op: sender.OpPost, Work: wr})
		if err != nil {
			return err
		}
		if !c.Full {
			cn.posted[s]++
			return nil
		}
	}
	cn.backlog[s] = append(cn.backlog[s], wr)
	cn.posted[s]++
	return nil
}

// completed reports the sender's completions to the ledger and moves the backlog of their
// streams into the room they left.
func (nic *NIC) completed(done []sender.Done) {
	for _, d := range done {
		nic.nw.ledger.SenderDone(nic.now(), d.ID)
	}
	for _, d := range done {
		cn := nic.conns[d.Conn]
		for len(cn.backlog[d.Stream]) > 0 {
			if c, err := nic.send(sender.Call{Op: sender.OpPost, Work: cn.backlog[d.Stream][0]}); err != nil || c.Full {
				break // the ring is full again
			}
			cn.backlog[d.Stream] = cn.backlog[d.Stream][1:]
		}
	}
}
