package placement

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/wire"
)

// DropReason says why placement refused a packet. Codes are stable (only ever appended) and fit
// DropReasonBits.
type DropReason uint8

// Drop reasons, in the order of the rules of the package documentation's check list.
const (
	DropNone             DropReason = iota // placed
	DropInvalidDesc                        // descriptor the parser should have refused
	DropStaleMessage                       // MSN before the stream's completion point
	DropReceiverNotReady                   // no receive posted for the MSN
	DropMessageFailed                      // a packet of a message that already failed
	DropDuplicate                          // bytes already placed, or the message is complete
	DropInconsistent                       // opcode, message length or rkey differ from the message's
	DropReceiveTooSmall                    // SEND: message longer than the posted buffer
	DropMessageTooLong                     // more than MaxMsgPackets packets
	DropSegmentation                       // not mtu segmentation
	DropRKeyInvalid                        // rkey index out of range or entry not valid
	DropRKeyTag                            // rkey tag differs from the entry's generation
	DropWrongConnection                    // region owned by another connection
	DropNoWriteAccess                      // region without remote write access
	DropOutOfBounds                        // bytes outside the region
	NumDropReasons                         // number of codes
)

// DropReasonBits is the width of a drop reason code.
const DropReasonBits = 4

var dropNames = [NumDropReasons]string{
	"none", "invalid_descriptor", "stale_message", "receiver_not_ready", "message_failed",
	"duplicate", "inconsistent", "receive_too_small", "message_too_long", "segmentation",
	"rkey_invalid", "rkey_tag_mismatch", "wrong_connection", "no_write_access", "out_of_bounds",
}

func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropNames[r]
	}
	return fmt.Sprintf("DropReason(%d)", uint8(r))
}

// Nak is the NAK code a drop reason answers with (0: none). DropMessageFailed repeats the code
// the message failed with, which is not a function of the reason alone (see Result.Nak).
func (r DropReason) Nak() wire.NakCode {
	switch r {
	case DropReceiverNotReady:
		return wire.NakReceiverNotReady
	case DropInconsistent, DropMessageTooLong, DropSegmentation:
		return wire.NakInvalidRequest
	case DropReceiveTooSmall:
		return wire.NakReceiveTooSmall
	case DropRKeyInvalid, DropRKeyTag, DropWrongConnection, DropNoWriteAccess:
		return wire.NakRKeyViolation
	case DropOutOfBounds:
		return wire.NakBoundsViolation
	}
	return 0
}

// AllDropReasons lists every code in order.
func AllDropReasons() []DropReason {
	out := make([]DropReason, NumDropReasons)
	for i := range out {
		out[i] = DropReason(i)
	}
	return out
}

// compile-time: the codes fit DropReasonBits.
const _ = uint(1<<DropReasonBits - int(NumDropReasons))
