// Reflection calling methods and functions.
package main

import (
	"fmt"
	"reflect"
	"strings"
)

type Greeter struct{ Name string }

func (g Greeter) Hello(greeting string) string { return greeting + ", " + g.Name }
func (g *Greeter) Rename(n string)             { g.Name = strings.ToUpper(n) }

func main() {
	g := &Greeter{"world"}
	v := reflect.ValueOf(g)
	out := v.MethodByName("Hello").Call([]reflect.Value{reflect.ValueOf("hello")})
	fmt.Println(out[0].String())
	v.MethodByName("Rename").Call([]reflect.Value{reflect.ValueOf("gopher")})
	fmt.Println(g.Hello("hi"))
	f := reflect.ValueOf(strings.Repeat)
	fmt.Println(f.Call([]reflect.Value{reflect.ValueOf("ab"), reflect.ValueOf(3)})[0])
	m, _ := reflect.TypeOf(g).MethodByName("Hello")
	fmt.Println(m.Func.Call([]reflect.Value{v, reflect.ValueOf("hey")})[0])
}
