// Package baseline is RoCEv2 as deployed, the side-by-side baseline of mrgen's transport
// experiments: one reliable-connection QP per pair of hosts on one fixed ECMP route (one UDP
// source port), a 24-bit PSN, a responder that accepts only the expected PSN and sends one
// sequence-error NAK per expected PSN, a go-back-N requester (on a NAK, or on the local ACK
// timeout with no progress, resend everything from the oldest unacknowledged packet) with a
// retry limit, and DCQCN rate control (CNPs from the notification point, rate cuts and the
// timer/byte-counter increase at the reaction point). It runs on golden/fabric and reports to
// the same traffic.Ledger as MetaRoCE's golden/transport, so every figure of an experiment is a
// ratio from one run. docs/baseline.md lists what is modelled, each constant's source and what
// is simplified.
package baseline
