package fabric

// Gbps is the port's link rate in Gb/s (a NIC paces against its host link's rate).
func (p *Port) Gbps() float64 { return 1000 / p.psPerBit }

// Serialization is how long a frame of bytes (Packet.Bytes) occupies the port's link,
// WireOverhead included, exactly as the fabric times it.
func (p *Port) Serialization(bytes int) Time { return p.serialize(bytes) }
