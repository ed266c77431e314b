// Package sender is the behavioural truth of a MetaRoCE NIC's send side: which data packet
// goes next (a retransmission, a moved packet or a new one, on which path, with which PSN and
// header), when a connection is paced or gated, what an ACK or NAK changes, and what the
// timers resend or move. It is the only Go implementation of these rules: golden/transport
// uses it in every protocol experiment, and the send pipeline's RTL is to be checked against
// it packet for packet, as hdl/acker is against golden/acker. It is built from golden/window
// (windows, spraying, RTO and path failure: SendDecision, AckUpdate, Expire), golden/sack
// (Sender: per-path una/nxt and the loss report of an ACK) and golden/psn.
//
// Time is an explicit input: every method takes now, a count of ticks of 1/TicksPerNS ns
// (TicksPerNS = 1: the NIC's nanosecond timestamp counter; golden/transport runs the unit on
// golden/fabric's picoseconds, TicksPerNS = 1000). Wire timestamps, sentAt and the window
// unit's times are ns = now/TicksPerNS mod 2^32. Every timer fires at an exact tick that the
// unit reports (Arm/Rearm, TakeWakes, Nak; NextTimer is the earliest).
//
// # Tables
//
// With C connections, P paths, S streams, D = posted_receives_per_stream, W = sack_width and
// M = max_cwnd (packets):
//
//   - Work-request rings, one per (connection, stream), WorkDepth entries (default 8·D,
//     greater than D): {work request (opcode, length, local address, remote VA and rkey, id),
//     MSN (the slot's tag), packets n, next packet to cut, packets acknowledged, an
//     acknowledged bitmap of MaxPackets bits, done}. Pointers head ≤ start ≤ tail (MSNs):
//     [head, start) started and not all acknowledged in order (at most D, the receiver's
//     posted receives), [start, tail) posted and not started; a flag says message start−1 is
//     still being cut. The k-th request posted on a stream is MSN k and sits in slot k mod
//     WorkDepth. A full ring (tail − head = WorkDepth) refuses PostWork (ErrQueueFull): the
//     host keeps the request and posts it when a completion makes room; since WorkDepth > D,
//     a full ring always holds a request to start, so the refusal never idles the stream.
//   - Packet records, one table of R = RecordDepth entries per (connection, path): the
//     smallest power of two ≥ W + M (at most the PSN space), or RecordsPerPath (the
//     configuration's sender.records_per_path, 128 by default) when that is set and less.
//     The record of PSN p is slot p mod R: {valid, generation, PSN, message (stream, MSN), packet index, sacked, init,
//     retx, queued, inNIC, copied, nakked, waiting, sentAt}. A path's live records are the
//     PSNs of [una, nxt) of its golden/sack entry while it is not Failed (none once it is);
//     that span is below W + M (the SACKed ones lie within W of una and every other one
//     counts in the path's window, at most M), and below R because a connection one of whose
//     paths holds R live records takes no new or moved packet (Next, BlockedRecords). So two
//     live records never share a slot (insert panics if they would: an internal invariant).
//     A Ref {conn, path, slot, generation} names a record; the generation counts the slot's allocations,
//     so a Ref to a record acknowledged, moved or forgotten since is stale and ignored.
//   - The retransmit FIFO (RetxDepth Refs; default 2·R), a moved FIFO per connection
//     (MovedDepth entries {message, packet index}; default P·R) and the RNR retry FIFO
//     (RetryDepth entries {due, Ref}; default R): WithDefaultDepths gives each rule, and
//     Occupancy reports the most each table has held. A full FIFO drops the request and
//     counts it (RetxOverflows: the record is not marked queued and a later loss signal or
//     the RTO queues it again; RetryOverflows: the record is not marked waiting, so loss
//     recovery resends it without the delay; MovedOverflows: the packet is lost to the
//     sender and its message does not complete).
//     None overflows in golden/transport's experiments (the counters stay 0); cosim's sender
//     scenario `overflow` shrinks the FIFOs to reach these paths.
//   - Per connection: the stream round-robin pointer, per path needInit and probed, inWork,
//     blocked, nextSend (pacing, ticks), sending (has sent), heard (an ACK came back). Per NIC:
//     the work list (each connection at most once, in the order they joined, and a position),
//     the scan's state {on, next time, busy} and the pacing wake register.
//
// # Stale references
//
// A record or a moved entry may outlive its message: the copy on one path is acknowledged,
// the message completes, and the other copy is still retransmitted or moved later (the
// receiver drops it as a duplicate). Such a packet is still sent, rebuilt from the message's
// ring slot, which keeps its fields until the slot is reposted (WorkDepth requests later). A
// reference whose slot was reposted (tag ≠ MSN) is dropped, counted as StaleDropped; with the
// default depth this never happens in golden/transport's experiments.
//
// # Work requests (PostWork, Doorbell)
//
// PostWork writes a request into its ring (no scheduling); Doorbell puts the connection on the
// work list if it is not on it. The host rings the doorbell after every post.
//
// # The next packet (Next), called while some port has room for a data packet
//
//  1. Retransmit FIFO: pop the oldest Ref. A stale Ref, or a record SACKed since, is skipped.
//     The record's queued flag clears. A record of a path that is now Failed is moved (below)
//     instead. A record whose message slot was reposted is dropped. Otherwise the record is
//     resent on its path with its PSN (kind Retx, flags Retx|AckReq).
//  2. Otherwise the work list, from its position, at most once round: a connection with no
//     moved packet and no startable stream leaves the list (its position is taken by the next).
//     Else the position advances past it, and it is skipped if blocked; if paced (nextSend >
//     now: a wake-up at nextSend is asked for unless one at or before it is pending); if it
//     has not heard from its receiver, has sent and has a packet in flight (the first-RTT
//     gate: it becomes blocked); if one of its paths holds R live records (it becomes
//     blocked, BlockedRecords: only an ACK or a timer event frees one); or if
//     window.SendDecision says no (it becomes blocked: only an ACK or a timer event of the
//     connection changes its window). Otherwise the
//     packet is the connection's oldest moved packet (kind Moved), else the next new packet
//     of its streams (kind New), round robin over streams starting after the last one served:
//     a stream's current message if it has packets left, else its next posted message if
//     fewer than D are started (it gets the next MSN). The record of (path, PSN) SendDecision
//     chose is allocated, flagged init if the path restarted (needInit clears), golden/sack
//     is told the PSN was sent, and the connection is paced. The first data packet of a
//     connection that has not heard from its receiver carries an ANNOUNCE ahead of it (with
//     Announce on; docs/wire-format.md §10.1).
//
// A packet's flags: First on packet 0, Last|AckReq on the last, AckReq while the connection
// has not heard, PathInit on an init record, Retx|AckReq on a retransmission. Its header
// carries the peer's connection id, path, stream, PSN and MSN, and the WRITE extension
// {message length, rkey, remote VA + offset} or the SEND one {message length, offset}; its
// payload is the DMA read (local address + offset, length) of placement's segmentation (mtu
// packets); its UDP source port is the path's entropy. The record is inNIC until Left.
//
// Pacing: with the connection's last rate hint h ≠ 0, a frame of b wire bytes (payload plus
// the opcode's overhead) sets nextSend = max(nextSend, now − 4·g) + g with g = PaceGap(b, h),
// b·8000·TicksPerNS/(h·100) ticks rounded half up: a connection that fell behind may catch
// up by four frames.
//
// Left(now, ref): the packet left the NIC: its record (if live) is no longer inNIC and was
// sent at ns(now).
//
// # An ACK (Ack)
//
// An ACK on a Failed path is ignored. Otherwise golden/sack.Sender judges it against the
// path's una. Accepted: every record from the old una up to the cumulative PSN is freed,
// those not SACKed counting as cumulative progress and as acknowledged; every record the
// bitmap SACKs (bit i: PSN cum+i, i ≥ 1) that was not is marked SACKed and acknowledged; every
// PSN golden/sack reports newly lost is queued for retransmission unless its record was
// retransmitted at or after the time the ACK echoes. Accepted or duplicate: the path's probe
// flag clears; loss by send time queues every record of [una, nxt), neither SACKed, queued
// nor inNIC, sent before the echo; window.AckUpdate gets the progress counts, ECN echo,
// timestamp echo and rate hint. Whatever the verdict, the connection is unblocked and has
// heard, and joins the work list if it has moved packets or a startable stream.
//
// Acknowledging a packet (not of a NAKed record, not already acknowledged through another
// copy) sets its bit in the message; the message completes (Done, returned in order) when all
// its packets are, and the stream's head passes every completed message at its front.
// Queueing a record for retransmission does nothing if it is queued, inNIC or SACKed.
//
// # A NAK (Nak)
//
// The record of the NAKed PSN (none: the NAK is stale and does nothing). Whatever the code, a
// NAK of a live record proves the path alive: window.Heard (the liveness step of an ACK).
// Receiver-not-ready: unless the record is queued, inNIC or SACKed (a copy is about to leave,
// or the PSN got through after all), a retry {due RNRDelay µs later, its Ref} is queued and the
// record becomes queued and waiting, so loss recovery, the tail probe and a timeout's copies
// leave it alone until the retry is due (should a copy get through meanwhile, its
// acknowledgement counts as progress as usual). Any other code: the record becomes nakked (its
// acknowledgement is no longer progress) and the message fails (MessagesFailed). The
// receiver's RNR delay is a constant, so retries fall due in FIFO order (else see Retry).
//
// # Timers, each its own event; at equal times in the order they were armed
//
//   - The scan (Arm, Scan, Rearm). The host arms it whenever it gives the unit work or a
//     packet arrives; it runs ScanTicks later. Scan visits every connection that has sent and
//     each of its paths in order: first the tail probe — unless the path's probe flag is set,
//     it has no live record, or it is Failed: with an RTT sample the timeout is
//     max(max(2·SRTT, SRTT + 4·RTTVar) + AckDelayNS, TailProbeMinNS), without one (only a
//     connection that has not heard) FirstProbeNS; if the oldest unacknowledged record not
//     waiting for its RNR retry ("oldest" below too: NAKs keep a refusing receiver's path alive,
//     so a loss behind a waiting packet is found only by looking past it) is neither queued nor
//     inNIC and left more than that long ago, it is queued and the flag set
//     — then window.Expire: any event unblocks the connection. Timeout or suspect: the oldest
//     unacknowledged record is queued, and every unacknowledged record not yet copied (nor
//     nakked nor waiting) is copied to the moved FIFO once (the connection joins the work list). Failed:
//     every unacknowledged record not copied is moved, then the path's records are forgotten.
//     Probe: every unacknowledged record is moved, the records forgotten, the path's
//     golden/sack entry restarts at its window NextPSN and its next packet carries PathInit.
//     The scan is busy if a visited connection has packets in flight, moved packets, a
//     startable stream or a path not Active. After the host has taken the packets the scan
//     made ready, Rearm runs it again ScanTicks after this run if it was busy or the
//     retransmit FIFO is not empty, else stops it.
//   - Pacing wake-ups (TakeWakes, Woke): each wake-up the work list asked for; when it comes
//     the pending one clears if it is that one, and the host calls Next again.
//   - RNR retries (Retry): every retry at the FIFO's head that is due resolves its Ref; a
//     record still waiting stops waiting (RNRRetries) and its Ref goes to the retransmit FIFO,
//     so the packet is resent on its path with its PSN (a full FIFO: RetxOverflows and queued
//     clears); a record acknowledged, moved or forgotten since is left alone. A retry behind
//     a later one (a peer's RNR delay shrank) goes with it, late but not lost.
//
// "Moving" a record frees it and appends {message, packet index} to the moved FIFO (the
// connection joins the work list): it is resent as a new packet on the path SendDecision picks.
package sender
