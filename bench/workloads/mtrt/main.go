// Command mtrt is the kprof evaluation workload in the role of SPEC JVM98
// _227_mtrt: a multi-threaded ray tracer. A generated scene of spheres over a
// checkered plane, with shadows, specular highlights and reflections, is
// rendered by exactly two goroutines: goroutine 0 renders the even rows of
// every frame and goroutine 1 the odd rows. The halves are combined in a
// fixed order, so the result does not depend on scheduling.
//
// Every floating-point product that feeds an addition is wrapped in an
// explicit float64 conversion, which the Go specification defines to round
// and so forbids fused multiply-add: the image is bit-identical on every
// GOARCH. Only +, -, *, /, math.Sqrt (all correctly rounded) and math.Floor
// (exact) are used.
//
// Usage: mtrt [-n frames]. Each unit of -n is one 256x192 frame seen from a
// different camera position. The program prints one deterministic checksum
// line.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	width    = 256
	height   = 192
	maxDepth = 4
	eps      = 1e-6
)

// Vec is a 3-vector, also used for RGB colours.
type Vec struct{ X, Y, Z float64 }

func add(a, b Vec) Vec { return Vec{a.X + b.X, a.Y + b.Y, a.Z + b.Z} }
func sub(a, b Vec) Vec { return Vec{a.X - b.X, a.Y - b.Y, a.Z - b.Z} }
func scale(a Vec, s float64) Vec {
	return Vec{float64(a.X * s), float64(a.Y * s), float64(a.Z * s)}
}
func mul(a, b Vec) Vec { return Vec{float64(a.X * b.X), float64(a.Y * b.Y), float64(a.Z * b.Z)} }
func dot(a, b Vec) float64 {
	return float64(a.X*b.X) + float64(a.Y*b.Y) + float64(a.Z*b.Z)
}
func cross(a, b Vec) Vec {
	return Vec{
		float64(a.Y*b.Z) - float64(a.Z*b.Y),
		float64(a.Z*b.X) - float64(a.X*b.Z),
		float64(a.X*b.Y) - float64(a.Y*b.X),
	}
}
func norm(a Vec) Vec { return scale(a, 1/math.Sqrt(dot(a, a))) }

// madd returns a + b*s.
func madd(a, b Vec, s float64) Vec { return add(a, scale(b, s)) }

// Ray is a half-line.
type Ray struct{ O, D Vec }

// Material describes a surface.
type Material struct {
	Color   Vec
	Diffuse float64
	Spec    float64
	Reflect float64
	Checker bool
}

// Sphere is a scene object.
type Sphere struct {
	C   Vec
	R2  float64
	Mat Material
}

// Light is a point light.
type Light struct{ P, Color Vec }

// Scene holds the objects; the plane y = 0 is implicit.
type Scene struct {
	Spheres []Sphere
	Lights  []Light
	Plane   Material
	Ambient Vec
	Sky     Vec
}

func genScene(r *rand.Rand) *Scene {
	s := &Scene{
		Plane:   Material{Color: Vec{0.9, 0.9, 0.9}, Diffuse: 0.8, Spec: 0.1, Reflect: 0.25, Checker: true},
		Ambient: Vec{0.08, 0.08, 0.1},
		Sky:     Vec{0.35, 0.5, 0.8},
		Lights: []Light{
			{P: Vec{-6, 9, -4}, Color: Vec{0.8, 0.75, 0.7}},
			{P: Vec{7, 6, -6}, Color: Vec{0.35, 0.4, 0.5}},
		},
	}
	for i := 0; i < 40; i++ {
		rad := 0.3 + float64(r.IntN(70))/100
		c := Vec{float64(r.IntN(1200))/100 - 6, rad, float64(r.IntN(1200))/100 - 2}
		m := Material{
			Color:   Vec{float64(20+r.IntN(80)) / 100, float64(20+r.IntN(80)) / 100, float64(20+r.IntN(80)) / 100},
			Diffuse: float64(50+r.IntN(50)) / 100,
			Spec:    float64(r.IntN(80)) / 100,
			Reflect: float64(r.IntN(60)) / 100,
		}
		s.Spheres = append(s.Spheres, Sphere{C: c, R2: float64(rad * rad), Mat: m})
	}
	return s
}

// intersect returns the nearest hit distance, normal and material.
func (s *Scene) intersect(ray Ray) (t float64, n Vec, m *Material, hit bool) {
	t = math.Inf(1)
	for i := range s.Spheres {
		sp := &s.Spheres[i]
		oc := sub(ray.O, sp.C)
		b := dot(oc, ray.D)
		c := dot(oc, oc) - sp.R2
		disc := float64(b*b) - c
		if disc < 0 {
			continue
		}
		sq := math.Sqrt(disc)
		d := -b - sq
		if d < eps {
			d = -b + sq
		}
		if d > eps && d < t {
			t, m, hit = d, &sp.Mat, true
			n = norm(sub(madd(ray.O, ray.D, d), sp.C))
		}
	}
	if ray.D.Y < -eps {
		d := -ray.O.Y / ray.D.Y
		if d > eps && d < t {
			t, m, hit = d, &s.Plane, true
			n = Vec{0, 1, 0}
		}
	}
	return
}

func (s *Scene) occluded(p, toLight Vec, dist float64) bool {
	ray := Ray{p, toLight}
	for i := range s.Spheres {
		sp := &s.Spheres[i]
		oc := sub(ray.O, sp.C)
		b := dot(oc, ray.D)
		c := dot(oc, oc) - sp.R2
		disc := float64(b*b) - c
		if disc < 0 {
			continue
		}
		d := -b - math.Sqrt(disc)
		if d > eps && d < dist {
			return true
		}
	}
	return false
}

func pow16(x float64) float64 {
	x = float64(x * x)
	x = float64(x * x)
	x = float64(x * x)
	return float64(x * x)
}

// trace returns the colour seen along ray and counts the rays cast.
func (s *Scene) trace(ray Ray, depth int, rays *uint64) Vec {
	*rays++
	t, n, m, hit := s.intersect(ray)
	if !hit {
		up := ray.D.Y
		if up < 0 {
			up = 0
		}
		return madd(s.Sky, Vec{0.3, 0.3, 0.2}, up)
	}
	p := madd(ray.O, ray.D, t)
	base := m.Color
	if m.Checker {
		if (int64(math.Floor(p.X))+int64(math.Floor(p.Z)))&1 == 0 {
			base = scale(base, 0.35)
		}
	}
	col := mul(base, s.Ambient)
	for _, l := range s.Lights {
		toL := sub(l.P, p)
		dist := math.Sqrt(dot(toL, toL))
		toL = scale(toL, 1/dist)
		lambert := dot(n, toL)
		if lambert <= 0 {
			continue
		}
		*rays++
		if s.occluded(madd(p, n, 1e-4), toL, dist) {
			continue
		}
		col = add(col, scale(mul(base, l.Color), float64(lambert*m.Diffuse)))
		// Blinn-Phong highlight.
		h := norm(sub(toL, ray.D))
		if spec := dot(n, h); spec > 0 && m.Spec > 0 {
			col = add(col, scale(l.Color, float64(pow16(spec)*m.Spec)))
		}
	}
	if m.Reflect > 0 && depth < maxDepth {
		rd := sub(ray.D, scale(n, float64(2*dot(ray.D, n))))
		rc := s.trace(Ray{madd(p, n, 1e-4), rd}, depth+1, rays)
		col = add(scale(col, 1-m.Reflect), scale(rc, m.Reflect))
	}
	return col
}

func toByte(c float64) byte {
	v := float64(c*255) + 0.5
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return byte(v)
}

// camera returns the eye position and basis for frame f.
func camera(f int) (eye, fwd, right, up Vec) {
	k := float64(f%32) / 32
	eye = Vec{-7 + float64(14*k), 2.5 + float64(1.5*k), -9}
	look := Vec{0, 0.8, 3}
	fwd = norm(sub(look, eye))
	right = norm(cross(Vec{0, 1, 0}, fwd))
	up = cross(fwd, right)
	return
}

// renderHalf renders the rows y with y%2 == half of each frame and returns
// one hash per frame.
func renderHalf(s *Scene, frames, half int) (hashes []uint64, rays uint64) {
	row := make([]byte, 3*width)
	for f := 0; f < frames; f++ {
		eye, fwd, right, up := camera(f)
		h := fnv.New64a()
		for y := half; y < height; y += 2 {
			py := float64(float64(height-2*y-1)/float64(height)) * 0.75
			for x := 0; x < width; x++ {
				px := float64(float64(2*x+1-width)/float64(width)) * 1.0
				dir := norm(madd(madd(fwd, right, px), up, py))
				c := s.trace(Ray{eye, dir}, 0, &rays)
				row[3*x], row[3*x+1], row[3*x+2] = toByte(c.X), toByte(c.Y), toByte(c.Z)
			}
			h.Write(row)
		}
		hashes = append(hashes, h.Sum64())
	}
	return hashes, rays
}

func main() {
	n := flag.Int("n", 200, "problem size: number of 256x192 frames")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "mtrt: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()
	scene := genScene(rand.New(rand.NewPCG(1, 2)))

	var hashes [2][]uint64
	var rays [2]uint64
	var wg sync.WaitGroup
	for half := 0; half < 2; half++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hashes[half], rays[half] = renderHalf(scene, *n, half)
		}()
	}
	wg.Wait()

	sum := fnv.New64a()
	var word [8]byte
	for f := 0; f < *n; f++ {
		for half := 0; half < 2; half++ {
			v := hashes[half][f]
			for i := range word {
				word[i] = byte(v >> (8 * i))
			}
			sum.Write(word[:])
		}
	}
	fmt.Printf("mtrt n=%d rays=%d+%d checksum=%016x\n", *n, rays[0], rays[1], sum.Sum64())
}
