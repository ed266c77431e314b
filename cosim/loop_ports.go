// The closed loop's port bindings of nic_rx.

package cosim

import (
	"github.com/mrgen/mrgen/verilator"
)

// rxPorts are the nic_rx ports the closed loop drives and reads.
type rxPorts struct {
	rst, now, localMAC, localIP                                    verilator.Field
	inData, inKeep, inValid, inReady, inLast, inUser               verilator.Field
	peerValid, peerConn, peerRemote, peerMAC, peerIP, peerV6       verilator.Field
	ctlValid, ctlReady, ctlOp, ctlConn, ctlStream, ctlAddr, ctlLen verilator.Field
	ctlAccess, ctlRKey, mCtlValid, mCtlReady, mCtlStatus, mCtlRKey verilator.Field
	dmaValid, dmaReady, dmaAddr, dmaLen, dmaTag                    verilator.Field
	cplValid, cplReady, cplConn, cplStream, cplMSN, cplOp          verilator.Field
	cplMsgLen, cplBytes, cplStatus, cplBufAddr, cplBufLen, cplRKey verilator.Field
	payData, payKeep, payValid, payReady, payLast, payTag          verilator.Field
	pvdValid, pvdReady, pvdTag, pvdPlaced                          verilator.Field
	outData, outKeep, outValid, outReady, outLast, outDest         verilator.Field
	dropValid, dropReason, busy, idle, wakeValid, wakeAt           verilator.Field
	cntData, cntAcks, cntNaks                                      verilator.Field
}

func bindRxPorts(lay *verilator.Layout, resetPort string) (*rxPorts, error) {
	var p rxPorts
	b := portBinder{lay: lay}
	in, out := b.in, b.out
	p.rst, p.now, p.localMAC, p.localIP = in(resetPort), in("now"), in("local_mac"), in("local_ip")
	p.inData, p.inKeep, p.inValid, p.inReady = in("s_axis_tdata"), in("s_axis_tkeep"), in("s_axis_tvalid"), out("s_axis_tready")
	p.inLast, p.inUser = in("s_axis_tlast"), in("s_axis_tuser")
	p.peerValid, p.peerConn, p.peerRemote = in("s_peer_valid"), in("s_peer_conn"), in("s_peer_remote_conn")
	p.peerMAC, p.peerIP, p.peerV6 = in("s_peer_mac"), in("s_peer_ip"), in("s_peer_ipv6")
	p.ctlValid, p.ctlReady, p.ctlOp, p.ctlConn = in("s_ctl_valid"), out("s_ctl_ready"), in("s_ctl_op"), in("s_ctl_conn")
	p.ctlStream, p.ctlAddr, p.ctlLen, p.ctlAccess = in("s_ctl_stream"), in("s_ctl_addr"), in("s_ctl_len"), in("s_ctl_access")
	p.ctlRKey, p.mCtlValid, p.mCtlReady = in("s_ctl_rkey"), out("m_ctl_valid"), in("m_ctl_ready")
	p.mCtlStatus, p.mCtlRKey = out("m_ctl_status"), out("m_ctl_rkey")
	p.dmaValid, p.dmaReady, p.dmaAddr = out("m_dma_valid"), in("m_dma_ready"), out("m_dma_addr")
	p.dmaLen, p.dmaTag = out("m_dma_len"), out("m_dma_tag")
	p.cplValid, p.cplReady, p.cplConn, p.cplStream = out("m_cpl_valid"), in("m_cpl_ready"), out("m_cpl_conn"), out("m_cpl_stream")
	p.cplMSN, p.cplOp, p.cplMsgLen, p.cplBytes = out("m_cpl_msn"), out("m_cpl_op"), out("m_cpl_msg_len"), out("m_cpl_bytes")
	p.cplStatus, p.cplBufAddr, p.cplBufLen, p.cplRKey = out("m_cpl_status"), out("m_cpl_buf_addr"), out("m_cpl_buf_len"), out("m_cpl_rkey")
	p.payData, p.payKeep, p.payValid, p.payReady = out("m_pay_tdata"), out("m_pay_tkeep"), out("m_pay_tvalid"), in("m_pay_tready")
	p.payLast, p.payTag = out("m_pay_tlast"), out("m_pay_tuser")
	p.pvdValid, p.pvdReady, p.pvdTag, p.pvdPlaced = out("m_pvd_valid"), in("m_pvd_ready"), out("m_pvd_tag"), out("m_pvd_placed")
	p.outData, p.outKeep, p.outValid, p.outReady = out("m_axis_tdata"), out("m_axis_tkeep"), out("m_axis_tvalid"), in("m_axis_tready")
	p.outLast, p.outDest = out("m_axis_tlast"), out("m_axis_tdest")
	p.dropValid, p.dropReason, p.busy, p.idle = out("m_drop_valid"), out("m_drop_reason"), out("busy"), out("idle")
	p.wakeValid, p.wakeAt = out("m_wake_valid"), out("m_wake_at")
	p.cntData, p.cntAcks, p.cntNaks = out("cnt_data"), out("cnt_acks"), out("cnt_naks")
	return &p, b.err
}
