package transport

import (
	"fmt"

	"github.com/mrgen/mrgen/golden/fabric"
	"github.com/mrgen/mrgen/golden/sender"
)

// The send side's call log: a NIC observed with ObserveSender reports every call it makes on
// its sender (golden/sender.Call), in order, with the arguments and what the call returned: the
// sequence a send engine's RTL is given to decide as golden did, and the answers it is compared
// with.

// send makes call c on the NIC's sender and reports it to the tap. It returns c's error.
func (nic *NIC) send(c sender.Call) (sender.Call, error) {
	c.Now = nic.ticks()
	c.Apply(nic.snd)
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
func (n *Network) ObserveSender(h int, f func(now fabric.Time, c sender.Call)) {
	n.nics[h].sendObs = f
}

// SenderParams are the NIC's sender parameters (its clock's, with its tables' depths).
func (nic *NIC) SenderParams() sender.Params { return nic.snd.Params() }

// SenderCounters are the NIC's sender's event counters.
func (nic *NIC) SenderCounters() sender.Counters { return nic.snd.Counters }
