package sender

// fifo is a bounded first-in first-out queue: the RTL's ring buffer of capacity entries. The
// Go storage grows on demand (most of a large NIC's queues stay short), the bound does not.
type fifo[T any] struct {
	items    []T
	head     int
	capacity int
	peak     int // the most entries it has held (Occupancy)
}

func newFIFO[T any](capacity int) fifo[T] { return fifo[T]{capacity: capacity} }

func (f *fifo[T]) Len() int   { return len(f.items) - f.head }
func (f *fifo[T]) Full() bool { return f.Len() >= f.capacity }

// Push appends x and reports whether there was room.
func (f *fifo[T]) Push(x T) bool {
	if f.Full() {
		return false
	}
	if f.head > 0 && f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	f.items = append(f.items, x)
	f.peak = max(f.peak, f.Len())
	return true
}

// Front is the oldest entry (the queue must not be empty).
func (f *fifo[T]) Front() T { return f.items[f.head] }

// Pop removes and returns the oldest entry (the queue must not be empty).
func (f *fifo[T]) Pop() T {
	var zero T
	x := f.items[f.head]
	f.items[f.head] = zero
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	} else if f.head >= 1024 && 2*f.head >= len(f.items) {
		f.items = append(f.items[:0], f.items[f.head:]...)
		f.head = 0
	}
	return x
}
