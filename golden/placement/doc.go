// Package placement is the behavioural truth of MetaRoCE's receive-side direct data placement:
// the memory-region (rkey) table, the per-stream posted-receive queues, the address computation
// and protection checks of WRITE and SEND packets, per-message completion tracking with exact
// duplicate suppression, and the in-order release of completions. There is no reorder buffer:
// every accepted packet is written to host memory where it belongs the moment it arrives.
//
// It is the only Go implementation of these rules: golden/transport places received data with it
// and cosim checks hdl/placement's RTL against it (DMA commands, completions, drop reasons, NAK
// codes, and the host memory image byte for byte, see HostMemory). docs/placement.md is the same
// specification with tables for the RTL engineer.
//
// # Tables (all in RAM in hardware, sizes from the configuration)
//
// Region table: memory_regions entries, index 0..memory_regions−1 (IndexBits =
// clog2(memory_regions), at least 1). An entry (Region) holds Valid (1), Base (64), Length (64),
// Access (2: bit 0 AccessRemoteWrite, bit 1 AccessRemoteRead), Conn (conn_id_width) and Gen
// (TagBits = 32 − IndexBits), the entry's registration generation.
//
// rkey (32 bits, wire.RKeyBits): bits IndexBits−1..0 are the table index, bits 31..IndexBits the
// tag. RegisterRegion takes the lowest-numbered invalid entry, advances its Gen by one modulo
// 2^TagBits skipping 0, and returns rkey = Gen<<IndexBits | index. Gen survives DeregisterRegion,
// so an rkey of a deregistered region never matches a later registration of the same entry until
// the tag wraps (2^TagBits − 1 registrations of one entry). Tag 0 is never issued: an all-zero
// rkey is always invalid. Reset clears Valid and Gen.
//
// Stream table: one entry per (connection, stream), index conn·streams_per_connection + stream,
// holding CompMSN (32, the MSN of the next completion to release), Head (the ring position of
// CompMSN) and Posted (0..D, receives posted and not yet released), where D =
// posted_receives_per_stream. Each stream entry owns a ring of D message slots (MsgSlot), which
// are at once the posted-receive queue and the completion tracker: slot (Head + k) mod D holds
// the k-th posted receive after the head, and it tracks message CompMSN + k.
//
// # Message identity and the receive match
//
// (connection, stream, MSN) identifies a message of either opcode. Each stream has one MSN
// sequence (32 bits, wire.MSNBits, mod 2^32) that numbers all its messages, WRITE and SEND alike,
// so completions of both are released in one order (a WRITE followed by a SEND that announces it
// completes in that order). Every message consumes one posted receive, in MSN order, like an
// InfiniBand WRITE-with-immediate: the receive for message m is the k-th posted receive after
// the head with k = (m − CompMSN) mod 2^32. A SEND places into that receive's buffer; a WRITE
// places at its VA and uses the receive only as its completion slot (the buffer is reported in
// the completion, its length is not checked). Because k is computed from the MSN alone, a packet
// of message m finds its buffer however its packets, and those of m−1, m−2, …, arrive.
//
// For a packet of message m on (conn, stream), d = (m − CompMSN) mod 2^32:
//
//   - d ≥ 2^31: the message is older than the completion point (already completed and released):
//     DropStaleMessage, no NAK, nothing written (a late duplicate or retransmission).
//   - d ≥ Posted (which covers every d ≥ D): no receive is posted for it: DropReceiverNotReady.
//   - otherwise the packet belongs to slot (Head + d) mod D.
//
// # Receiver not ready
//
// A packet whose message has no posted receive is dropped and counted (DropReceiverNotReady); it
// writes nothing and changes no state. The result carries NAK receiver_not_ready with RNR Delay =
// Params.RNRDelayUS (wire.RNRDelayUnitUS units). The sender resends the same packet after that
// delay, as often as it takes (it is not a failure of the message); the ACK/SACK state of the
// packet is the transport's business (the receiver does not commit a refused packet to its SACK
// state, so its PSN stays unacknowledged and the path resends it even if the NAK is lost).
//
// # Packet segmentation (what makes duplicate suppression exact)
//
// Placement requires the sender to segment a message of L bytes into N = max(1, ⌈L/mtu⌉)
// packets, packet i carrying message bytes [i·mtu, min((i+1)·mtu, L)): every packet but the last
// carries exactly mtu bytes, the last LastLen = L − (N−1)·mtu (0 only for the empty message).
// The wire format lets a sender choose packet sizes freely; placement narrows that for its own
// bookkeeping, and the golden sender segments this way. Each packet then has a unique slot bit:
//
//   - SEND: the packet's position is its Offset; it must be a multiple of mtu and its payload
//     must be mtu (when Offset + mtu < L) or exactly L − Offset; bit = Offset / mtu.
//   - WRITE: the message start is not on the wire, but all packets of a message share
//     VA mod mtu (their VAs differ by multiples of mtu), and ⌊VA/mtu⌋ rises by one per packet.
//     The first packet to arrive records Residue = VA mod mtu; every later one must have the same
//     residue and a payload of mtu or LastLen bytes; bit = ⌊VA/mtu⌋ mod B.
//
// A packet breaking these rules fails the message with DropSegmentation (NAK invalid_request).
// B = Params.MaxMsgPackets (a power of two, default 64) is the bitmap width of a slot, so a
// message may have at most B packets (L ≤ B·mtu; 256 KiB at the default mtu). A longer message
// fails with DropMessageTooLong (NAK invalid_request). Within one message N ≤ B consecutive
// values of ⌊VA/mtu⌋ are distinct mod B, so the bits are unique.
//
// # Per-packet rules, in this order (the first that applies decides)
//
//  1. Descriptor sanity (the parser guarantees all of it; a violation is DropInvalidDesc, no
//     NAK, no state change): op is WRITE or SEND, conn < connections, stream <
//     streams_per_connection, payload ≤ mtu, payload ≤ L, SEND Offset + payload ≤ L, WRITE
//     VA + payload does not wrap 2^64, payload = 0 only when L = 0.
//  2. Stale message → DropStaleMessage; not posted → DropReceiverNotReady (above).
//  3. Slot state: Failed → DropMessageFailed, NAK = the code the message failed with (the NAK
//     may have been lost, so it is repeated). Complete (waiting for an older message to be
//     released) → DropDuplicate, no NAK.
//  4. Consistency with the slot's first packet (only when the slot is Open): same opcode, same
//     L, and for WRITE the same rkey and Residue; else DropInconsistent. (Residue is checked as
//     part of rule 7 below, with reason DropSegmentation.)
//  5. SEND: L > buffer length → DropReceiveTooSmall (NAK receive_too_small). Offset + payload ≤
//     L ≤ buffer length, so the packet then fits its buffer.
//  6. N > B → DropMessageTooLong.
//  7. Segmentation (above) → DropSegmentation.
//  8. The packet's bit is already set → DropDuplicate: no NAK, nothing written, nothing counted
//     but the drop. This makes retransmissions idempotent: a message's bytes are counted once.
//     Then, Bytes + payload > L → DropSegmentation (only a WRITE sender that sent two
//     LastLen-sized packets can reach it; it keeps Bytes ≤ L).
//  9. WRITE protection, on the rkey's entry e = table[rkey mod 2^IndexBits]:
//     index ≥ memory_regions or !e.Valid → DropRKeyInvalid; tag ≠ e.Gen → DropRKeyTag;
//     conn ≠ e.Conn → DropWrongConnection; no AccessRemoteWrite → DropNoWriteAccess (all NAK
//     rkey_violation); the bytes [VA, VA+payload) outside [Base, Base+Length) →
//     DropOutOfBounds (NAK bounds_violation). The bounds test, without overflow:
//     VA ≥ Base ∧ VA − Base ≤ Length ∧ payload ≤ Length − (VA − Base).
//  10. Place: the DMA write is {Base address, payload}: WRITE at VA, SEND at buffer + Offset.
//     A zero-length packet places nothing (no DMA command) but counts. The bit is set, Bytes +=
//     payload, and when Bytes = L the slot is Complete.
//
// Rules 4 to 9 (except 8) fail the message: the slot becomes Failed with the NAK code, and its
// first failing reason is kept. Bytes the message placed before it failed stay in memory (DMA is
// not undone); no later packet of it writes anything. A slot whose first packet fails is opened
// as Failed. A protection error therefore never writes memory.
//
// # Completions
//
// After every packet, while the head slot is Complete or Failed, its Completion is released
// (appended to Result.Completions), the slot is cleared, Head = (Head+1) mod D, Posted −= 1 and
// CompMSN += 1 (mod 2^32). So completions leave each stream in MSN order, every message exactly
// once, and one packet may release several (a late first message releases the completed ones
// queued behind it). In hardware the release is a walker that retires at most one slot per clock
// from a completion FIFO; cosim compares the sequence of completions, not the cycle they leave.
// Completion holds conn, stream, MSN, opcode, L, the bytes placed, the status (0 = success, else
// the NAK code), the receive buffer (address, length) and, for a WRITE, the rkey.
//
// # Bounded work
//
// A packet reads one stream entry, one message slot and (WRITE) one region entry, and writes
// them back: one descriptor per clock (II=1) with a read-modify-write of three RAMs. Only the
// completion release may retire several slots, and it is decoupled as above. Everything is
// integer arithmetic on the stated widths, with no randomness.
package placement
