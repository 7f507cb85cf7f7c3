// Methods, method values, method expressions, interfaces, embedding.
package main

type counter struct{ n int }

func (c *counter) inc(d int) { c.n += d }
func (c counter) get() int   { return c.n }

type getter interface{ get() int }

type wrapped struct {
	counter
	extra int
}

func (w wrapped) get() int { return w.counter.get() + w.extra }

func main() {
	c := &counter{}
	inc := c.inc
	for i := 0; i < 20; i++ {
		inc(i)
	}
	get := counter.get
	var gs []getter = []getter{*c, wrapped{counter{5}, 7}, c}
	s := get(*c)
	for _, g := range gs {
		s += g.get()
	}
	println(s)
}
