package rewrite

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"strconv"
	"strings"

	"github.com/kprof/kprof/rewrite/internal/edit"
)

// Names used in rewritten source. They start with an underscore and a
// prefix no Go program uses by accident.
const (
	counterAlias   = "_kprof"
	depthVar       = "_kd"
	localVar       = "_kp" // charges accumulated locally (FuncPlan.Local)
	tagVar         = "_kt" // an expression switch's tag, for its dispatch (valueDispatch)
	lateVar        = "_kv" // prefix of a return's results evaluated before its final check (emitLateFinal)
	resultVar      = "_kr" // prefix of the results of a call returned through temporaries (return f())
	namedResultVar = "_kq" // prefix of the names kprof gives a function's unnamed results (namedResults)
	bodyDepthVar   = "_kb" // prefix of the depth at a range-over-func loop body's start (check.inRange)
	guardVar       = "_kg" // a type switch's guard, bound where no variable names it (typeCase)
)

// ReservedNames are the names of rewritten source that kprof's compiler
// (package toolchain's inliner patch) recognises, by role.
var ReservedNames = map[string]string{
	"local":     localVar,
	"depth":     depthVar,
	"tag":       tagVar,
	"result":    namedResultVar,
	"late":      lateVar,
	"bodyDepth": bodyDepthVar,
}

// Ranks order the insertions at one offset (package edit): closings of
// expression wraps (innermost first), then statements, then openings
// (outermost first).
const (
	rankClose       = 0
	rankDecl        = 50
	rankElse        = 60 // an else clause added for branch ticks, before what follows the if
	rankTick        = 75 // branch ticks (emitBranchTicks), before the branch's own charges
	rankLateEntry   = 90 // a late entry check (FuncPlan.LateEntry), before the push spot's charges and flush
	rankStmt        = 100
	rankExit        = 150 // after a spot's charges, before a pop
	rankRangeReturn = 160 // a return's final check in a range-over-func body, after the body's exit check
	rankPush        = 175 // a lazy push (FuncPlan.Lazy), after the spot's charges
	rankPop         = 200
	rankBind        = 250 // a switch tag's binding, around the tag's own wraps (valueDispatch)
	rankOpen        = 300
)

// valueDispatch tells which constant of a clause matched, to charge the
// comparisons that found it: a switch on the tag, or, where the tag is an
// integer and the clause's constants lie less than 256 apart and each
// charge fits 32 bits, a load from a table of the charges indexed by the
// tag's low byte (of uint8 where every charge is less than 256, as with
// the instruction metric; uint16 or uint32 for the cost metric's) (no branch: a tag that varies, such as a byte of input,
// made the switch's branches mispredict).
type valueDispatch struct {
	tag   string
	local bool // the function accumulates its charges (FuncPlan.Local)
	ints  bool // the tag has an integer type
	cases []dispatchCase
}

// dispatchCase is one constant of a clause (but the first) and what the
// comparisons up to it cost.
type dispatchCase struct {
	text  string // its source
	n     int64
	v     int64 // its value, where isInt
	isInt bool
}

// tableSpan bounds the range of a dispatch table's values and its charges.
const tableSpan = 256

// stmt returns the dispatch, adding the table it needs, if any, to f.
func (d *valueDispatch) stmt(f *fileEmitter, pos token.Pos) string {
	var b strings.Builder
	if !d.tableOK() || !f.universal(pos, "int64", "uint8", d.elem()) {
		// (The table's text names these types: a local of one of
		// those names would hide it.)
		fmt.Fprintf(&b, "switch %s { ", d.tag)
		for _, c := range d.cases {
			fmt.Fprintf(&b, "case %s: %s", c.text, check{n: c.n, local: d.local}.stmt())
		}
		b.WriteString("}; ")
		return b.String()
	}
	name := fmt.Sprintf("%s_%d", f.valueTable, len(f.tables))
	fmt.Fprintf(&b, "var %s = [%d]%s{", name, tableSpan, d.elem())
	for i, c := range d.cases {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d: %d", uint8(c.v), c.n)
	}
	b.WriteString("}")
	f.tables = append(f.tables, b.String())
	// Distinct values less than 256 apart differ in their low byte.
	return chargeText(d.local, fmt.Sprintf("int64(%s[uint8(%s)])", name, d.tag))
}

// elem returns the element type of d's table: the narrowest unsigned
// integer type that holds every charge.
func (d *valueDispatch) elem() string {
	var most int64
	for _, c := range d.cases {
		most = max(most, c.n)
	}
	switch {
	case most <= math.MaxUint8:
		return "uint8"
	case most <= math.MaxUint16:
		return "uint16"
	}
	return "uint32"
}

// tableOK reports whether d's dispatch can be a table.
func (d *valueDispatch) tableOK() bool {
	if !d.ints {
		return false
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range d.cases {
		if !c.isInt || c.n < 0 || c.n > math.MaxUint32 {
			return false
		}
		lo, hi = min(lo, c.v), max(hi, c.v)
	}
	return hi-lo >= 0 && hi-lo < tableSpan // (a difference that overflows is negative)
}

// pendingStmt is a charge statement being accumulated for one spot.
type pendingStmt struct {
	check
	prefix string
}

// fileEmitter writes the plans of one file as insertions.
type fileEmitter struct {
	*funcState                        // the function being emitted (emitFunc)
	labels     map[ast.Stmt]string    // labeled statements and their labels
	renamed    map[*ast.FuncType]bool // functions whose results kprof named (namedResults)
	generics   bool                   // the file's language version has generics (go1.18)
	*edit.Buffer
	fset    *token.FileSet
	file    *ast.File
	info    *types.Info
	pkg     *types.Package
	table   string   // name of the file's function table
	entries []string // function table entries
	// valueTable prefixes the names of the file's dispatch tables,
	// tables their declarations (valueDispatch).
	valueTable string
	tables     []string
	approx     []string
}

// funcRef returns the expression for the i'th function of the file table.
func (f *fileEmitter) funcRef(i int) string { return fmt.Sprintf("&%s[%d]", f.table, i) }

func (f *fileEmitter) emitFunc(p *FuncPlan, id int) {
	self := f.funcRef(id)
	// A range-over-func body is a function of its own (F-range1) that
	// cannot push itself: it samples like a leaf.
	yield := p.Fn.Synthetic != ""
	push := !p.Leaf && !yield
	f.funcState = newFuncState()
	chains := f.branchChains(p)
	for _, ch := range chains {
		for _, e := range ch.rhs {
			f.ticked[e] = ch
		}
	}
	entryChecked := f.emitPoints(p, id, self, yield, push)
	for _, ch := range chains {
		f.emitBranchTicks(ch)
	}
	if push && !entryChecked && !p.LateEntry {
		// Every push follows an entry check: at granularity 0 the counter
		// relies on it (see counter.Agent's Sample).
		f.Insert(p.Body.Lbrace+1, rankStmt, check{pre: true, entry: self}.stmt())
	}
	for _, cl := range f.valueOrder {
		d := f.valueCases[cl]
		f.Insert(cl.Colon+1, rankStmt, d.stmt(f, cl.Colon+1))
	}
	if ps := f.pending[p.Body.Lbrace+1]; yield && ps != nil {
		// What is pending where a range-over-func body starts was run by
		// the iterator: the checks there (of any block that lands there)
		// sample in its name.
		ps.preWho = "nil"
	}
	f.bulkCharges(p)
	f.emitPending()
	f.emitStack(p, self, push)
	if p.Leaf && !yield || p.Lazy {
		f.pushBeforePanics(p, self)
	}
	if yield {
		f.emitBodyExits(p, self)
	}
}

// pushBeforePanics pushes a function that has not pushed itself before
// each of its panic statements: the deferred calls the panic runs are
// called from the frames it unwinds (the Go runtime's stack shows them
// there), this one included. The frame whose deferred call recovers
// restores its depth (see "Pops"); a function that pushes lazily may have
// pushed already, and pushes at the same depth again.
func (f *fileEmitter) pushBeforePanics(p *FuncPlan, self string) {
	push := fmt.Sprintf("%s.P(%s); ", counterAlias, self)
	if p.Lazy {
		push = fmt.Sprintf("%s.PushAt(%s, %s); ", counterAlias, depthVar, self)
	}
	inspectOwn(f.info, p.Body, func(n ast.Node) bool {
		if st, ok := n.(*ast.ExprStmt); ok && isPanic(f.info, st.X) {
			f.Insert(st.Pos(), rankPush, push)
		}
		return true
	})
}

// isPanic reports whether x calls the builtin panic.
func isPanic(info *types.Info, x ast.Expr) bool {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	b, ok := info.Uses[id].(*types.Builtin)
	return ok && b.Name() == "panic"
}

// funcState is what the emitter keeps for the function it emits.
type funcState struct {
	// lateFinal are the return statements whose results hold charges
	// (&&, || operands): their final check comes after the results are
	// evaluated, through temporaries (see emitLateFinal), with the
	// sample naming the value.
	lateFinal    map[*ast.ReturnStmt]string
	pending      map[token.Pos]*pendingStmt
	pendingOrder []token.Pos
	valueCases   map[*ast.CaseClause]*valueDispatch
	valueOrder   []*ast.CaseClause
	bound        map[*ast.SwitchStmt]bool     // switches whose tag is bound to tagVar
	guarded      map[*ast.TypeSwitchStmt]bool // type switches whose guard is bound to guardVar
	ticked       map[ast.Expr]*branchChain    // operands whose ticks go to their if's branches
}

func newFuncState() *funcState {
	return &funcState{
		lateFinal:  map[*ast.ReturnStmt]string{},
		pending:    map[token.Pos]*pendingStmt{},
		valueCases: map[*ast.CaseClause]*valueDispatch{},
		bound:      map[*ast.SwitchStmt]bool{},
		guarded:    map[*ast.TypeSwitchStmt]bool{},
		ticked:     map[ast.Expr]*branchChain{},
	}
}

// emitPoints emits the charges and checks of p's points, and reports
// whether the function's entry is checked.
func (f *fileEmitter) emitPoints(p *FuncPlan, id int, self string, yield, push bool) (entryChecked bool) {
	// who is the function a check's sample shows on top of the stack:
	// a function that pushed itself is already there (nil); a leaf or a
	// range-over-func body names itself. At entry the pending instructions
	// are the caller's, so the check before the entry charge passes nil;
	// a check after it (the entry block returns) names the function, which
	// has not pushed itself yet. A function that pushes itself lazily
	// names itself, through counter.W (check.name).
	who := func(at Point) (pre, post string) {
		if p.Leaf || yield || p.Lazy || at.Kind == atFuncEntry {
			post = self
		} else {
			post = "nil"
		}
		pre = post
		if at.Kind == atFuncEntry {
			pre = "nil"
		}
		return pre, post
	}
	// The final checks of returns and breaks inside range-over-func loop
	// bodies (within this function's statements) sample with the stack
	// cut at the depth in rangeDepth: a function's own, or a loop body's
	// at its start (declared only if a check needs it).
	inRange := p.RangeExits
	rangeDepth, rangeDepthUsed := depthVar, false
	if yield {
		rangeDepth = fmt.Sprintf("%s%d", bodyDepthVar, id)
	}
	for _, at := range p.order {
		c := check{n: p.Charges[at], pre: p.Checks[at], post: p.Final[at], loose: p.Loose[at], local: p.Local, flush: p.Flush[at], quietFlush: p.QuietFlush[at]}
		if p.ExitEntry[at] {
			c.exitEntry = self
		}
		if p.Lazy && at.Kind != atFuncEntry {
			// (At entry it has not pushed itself.)
			c.depth = depthVar
		}
		if c.n == 0 && !c.pre && !c.post && !(c.local && (c.flush || c.quietFlush)) {
			continue
		}
		c.preWho, c.postWho = who(at)
		if st, ok := at.Node.(ast.Stmt); ok && inRange[st] > 0 && at.Kind == beforeStmt && (push || yield) && c.post {
			c.inRange, c.postWho, rangeDepthUsed = rangeDepth, self, true
		}
		if at.Kind == atFuncEntry && !yield {
			c.entry = self
			entryChecked = entryChecked || c.pre
		}
		f.emitPoint(p, at, c)
	}
	if yield && rangeDepthUsed {
		f.Insert(p.Body.Lbrace+1, rankDecl, fmt.Sprintf("%s := %s.Depth(); _ = %s; ", rangeDepth, counterAlias, rangeDepth))
	}
	return entryChecked
}

// emitPending writes the charges and checks that land on each spot as one
// statement.
func (f *fileEmitter) emitPending() {
	for _, pos := range f.pendingOrder {
		ps := f.pending[pos]
		if ps == nil {
			continue // charged in bulk
		}
		rank := rankStmt
		if ps.inRange != "" {
			// After the loop body's own exit check (rankExit), which
			// samples what the body ran in the body's name.
			rank = rankRangeReturn
		}
		if text := ps.stmt(); text != "" {
			f.Insert(pos, rank, ps.prefix+text)
		}
	}
}

// emitStack declares the accumulator and emits the push and the pops.
func (f *fileEmitter) emitStack(p *FuncPlan, self string, push bool) {
	if p.Local {
		f.Insert(p.Body.Lbrace+1, rankDecl, fmt.Sprintf("var %s int64; _ = %s; ", localVar, localVar))
	}
	if p.Lazy {
		// The depth at entry, restored on the way out; the push comes
		// before the first call.
		f.Insert(p.Body.Lbrace+1, rankPop, fmt.Sprintf("%s := %s.Depth(); _ = %s; ", depthVar, counterAlias, depthVar))
		pos, prefix := stmtSpot(p.PushAt)
		if p.LateEntry {
			// The entry check, where the function pushes: nothing it
			// ran is in the count yet (it accumulates, and has not
			// flushed), so what is pending is the caller's.
			f.Insert(pos, rankLateEntry, prefix+check{pre: true, entry: self}.stmt())
			prefix = ""
		}
		f.Insert(pos, rankPush, fmt.Sprintf("%s%s.PushAt(%s, %s); ", prefix, counterAlias, depthVar, self))
		f.emitPops(p)
	} else if push {
		// After the entry charge and check: push, and keep the depth to
		// restore on the way out — or, in a function that can pop by
		// count, pop where it returns.
		text := fmt.Sprintf("%s := %s.P(%s); _ = %s; ", depthVar, counterAlias, self, depthVar)
		if p.PopByCount {
			text = fmt.Sprintf("%s.P(%s); ", counterAlias, self)
		}
		if p.Defers {
			text += fmt.Sprintf("defer %s.R(%s); ", counterAlias, depthVar)
		}
		f.Insert(p.Body.Lbrace+1, rankPop, text)
		if !p.Defers {
			f.emitPops(p)
		}
	}
	if !push || p.Defers {
		for r := range f.lateFinal {
			f.emitLateFinal(p, r, "")
		}
	}
}

// emitBodyExits checks where a range-over-func body returns to its
// iterator: wherever it leaves the body, what it counted since its last
// check is sampled there, in its own name, not at the iterator's next
// check.
func (f *fileEmitter) emitBodyExits(p *FuncPlan, self string) {
	check := fmt.Sprintf("if %s.DueP() { %s.S(%s) }; ", counterAlias, counterAlias, self)
	var label string
	if r, ok := p.Fn.Syntax().(*ast.RangeStmt); ok {
		label = f.labels[r]
	}
	for _, e := range bodyExits(p.Body, true, label) {
		// A return or branch inside nested range-over-func loops
		// leaves the innermost body first: its check comes first.
		rank := rankExit + min(p.RangeExits[e], rankRangeReturn-rankExit-1)
		f.Insert(e.Pos(), rank, check)
	}
	if !isTerminating(lastStmt(p.Body)) {
		f.Insert(p.Body.Rbrace, rankExit, "; "+check)
	}
}

// check is what goes at one point: a charge of n instructions, a check
// before it (pre) and/or after it (post), and the function each check's
// sample names (see emitFunc). entry is set for a function's entry check,
// whose slow path also counts the call (counter.SE).
type check struct {
	n               int64
	pre, post       bool
	loose           bool // the pre check bounds time only (counter.SL)
	preWho, postWho string
	entry           string
	// exitEntry is set for a final check that stands for the function's
	// entry check too (FuncPlan.ExitEntry): its slow path takes the
	// caller's part first and counts the call (counter.SED).
	exitEntry string
	local     bool // the function accumulates charges in localVar (FuncPlan.Local)
	flush     bool // local: a call or a wait follows; flush localVar into the count
	// quietFlush: local: a quiet call follows; flush localVar into the
	// count with counter.CQ, which kprof's compiler may drop.
	quietFlush bool
	// depth: the function pushes itself lazily (FuncPlan.Lazy); depth names
	// the variable holding the depth at its entry, and a check's sample
	// names the function through counter.W.
	depth string
	// inRange is set for the final check of a return statement inside a
	// range-over-func loop body, where the iterator's frames are still on
	// the stack: it names the variable holding the depth below postWho,
	// the function (or enclosing loop body) whose instructions the check
	// samples (counter.SD).
	inRange string
}

// stmt returns the statements for c.
func (c check) stmt() string {
	if c.local {
		return c.localStmt()
	}
	var b strings.Builder
	if c.pre && c.entry != "" && c.post && c.n >= 0 && c.depth == "" && c.inRange == "" {
		// The entry check and the final check of a block that
		// returns, with nothing between them: one test of the count
		// after the charge (n ≥ 0: the entry check fires only when the
		// final one does), whose slow path takes each in turn.
		return fmt.Sprintf("if %s.D(%d) { %s.SED(0, %s, %d, %s) }; ", counterAlias, c.n, counterAlias, c.entry, c.n, c.postWho)
	}
	switch {
	case c.pre && c.entry != "":
		fmt.Fprintf(&b, "if %s.Due() { %s.SE(%s) }; ", counterAlias, counterAlias, c.entry)
	case c.pre && c.loose:
		fmt.Fprintf(&b, "if %s.Due() { %s.SL(%s) }; ", counterAlias, counterAlias, c.name(c.preWho))
	case c.pre:
		fmt.Fprintf(&b, "if %s.Due() { %s.S(%s) }; ", counterAlias, counterAlias, c.name(c.preWho))
	}
	switch {
	case c.post:
		n := strconv.FormatInt(c.n, 10)
		fmt.Fprintf(&b, "if %s.D(%s) { %s }; ", counterAlias, n, c.finalSample(n))
	case c.n != 0:
		b.WriteString(chargeText(false, strconv.FormatInt(c.n, 10)))
	}
	return b.String()
}

// chargeText returns the statement that charges amount instructions: to the
// accumulator in a function that keeps one (local), else to the count.
func chargeText(local bool, amount string) string {
	if local {
		return fmt.Sprintf("%s += %s; ", localVar, amount)
	}
	return fmt.Sprintf("%s.C(%s); ", counterAlias, amount)
}

// finalSample returns the slow path of c's final check (c.post), which
// charged amount.
func (c check) finalSample(amount string) string {
	if c.exitEntry != "" {
		return fmt.Sprintf("%s.SED(0, %s, %s, %s)", counterAlias, c.exitEntry, amount, c.name(c.postWho))
	}
	if c.inRange != "" {
		return fmt.Sprintf("%s.SD(%s, %s)", counterAlias, c.postWho, c.inRange)
	}
	return fmt.Sprintf("%s.S(%s)", counterAlias, c.name(c.postWho))
}

// name returns the expression with which a check's sample names the
// running function, who (see emitFunc's who): in a function that pushes
// itself lazily, whether it has pushed itself is known when it samples.
func (c check) name(who string) string {
	if c.depth == "" || who == "nil" {
		return who
	}
	return fmt.Sprintf("%s.W(%s, %s)", counterAlias, who, c.depth)
}

// chargeStmt returns the statement that charges n instructions in p's
// function.
func (p *FuncPlan) chargeStmt(n int64) string { return check{n: n, local: p.Local}.stmt() }

// localStmt returns the statements for c in a function that accumulates
// its charges in localVar: a charge adds to it; a check compares the
// goroutine's count with it (DueK); before a call or a wait, and at a
// return or panic, it is flushed into the count.
func (c check) localStmt() string {
	plain := c
	plain.local = false
	var b strings.Builder
	switch {
	case c.entry != "" && (c.flush || c.quietFlush || c.post):
		// Nothing is accumulated yet, and a call, a wait or the return
		// follows: charge the count.
		return plain.stmt()
	case c.entry != "":
		// The entry check, then accumulate: the function's next flush
		// charges the entry block too.
		plain.n, plain.post = 0, false
		b.WriteString(plain.stmt())
	case c.quietFlush && !c.flush && !c.post:
		// Before a quiet call only: the check, then the flush as one
		// expression that kprof's compiler can drop (counter.CQ).
		b.WriteString(c.localCheck())
		if c.n == 0 {
			fmt.Fprintf(&b, "%s = %s.CQ(%s); ", localVar, counterAlias, localVar)
		} else {
			fmt.Fprintf(&b, "%s = %s.CQ(%s + %d); ", localVar, counterAlias, localVar, c.n)
		}
		return b.String()
	case c.flush && (c.pre || !c.post):
		// Before a call or a wait: the check (unless the callee checks
		// on entry) compares the count with what is accumulated (DueK),
		// then one charge of the sum and the block's weight — one
		// read-modify-write of the count instead of two (without a
		// check: json 1.39× → 1.37×, jack 1.48× → 1.43×, pipeline
		// 1.36× → 1.32×, kprof of a9fc224 against 8bb6d7b's; with one:
		// json 1.307× → 1.279×, mtrt 1.151× → 1.102×, javac 1.247× →
		// 1.233×, kprof of 97c3430 against ae20f38's; 7 interleaved
		// runs, medians, as go run ./bench/ab takes them). A block that
		// also returns flushes, then checks and charges as a function
		// that does not accumulate.
		if c.pre && c.post {
			return flushText(0) + plain.stmt()
		}
		return c.localCheck() + flushText(c.n)
	default:
		b.WriteString(c.localCheck())
	}
	switch {
	case c.post:
		amount := localVar
		if c.n != 0 {
			amount = fmt.Sprintf("%s + %d", localVar, c.n)
		}
		fmt.Fprintf(&b, "if %s.D(%s) { %s }; ", counterAlias, amount, c.finalSample(amount))
	case c.n != 0:
		b.WriteString(chargeText(true, strconv.FormatInt(c.n, 10)))
	}
	return b.String()
}

// flushText returns the statements that charge the count with what a
// function accumulated in localVar and n more, and clear localVar.
func flushText(n int64) string {
	if n == 0 {
		return fmt.Sprintf("%s.C(%s); %s = 0; ", counterAlias, localVar, localVar)
	}
	return fmt.Sprintf("%s.C(%s + %d); %s = 0; ", counterAlias, localVar, n, localVar)
}

// localCheck returns c's check before its charge (if c.pre) in a function
// that accumulates its charges locally.
func (c check) localCheck() string {
	switch {
	case c.pre && c.loose:
		return fmt.Sprintf("if %s.DueK(%s) { %s.SLK(%s, %s); %s = 0 }; ", counterAlias, localVar, counterAlias, localVar, c.name(c.preWho), localVar)
	case c.pre:
		return fmt.Sprintf("if %s.DueK(%s) { %s.SK(%s, %s); %s = 0 }; ", counterAlias, localVar, counterAlias, localVar, c.name(c.preWho), localVar)
	}
	return ""
}

// tick returns a boolean expression that checks (if c.pre), charges and
// is true. (It charges the count even in a function that accumulates its
// charges locally: an expression cannot add to a local variable but
// through a function literal, which the inliner may not inline. kprof's
// compiler moves a tick's charge to the accumulator where that is exact:
// KprofFoldLate.)
func (c check) tick() string {
	if c.post && c.exitEntry == "" && c.inRange == "" {
		// A final check after the charge (a range-over-func body's
		// block that calls: its callee must not find the body's
		// instructions pending, see checks.go): T, then TC charging
		// nothing.
		pre := ""
		if c.pre {
			first := c
			first.post, first.n = false, 0
			pre = first.tick() + " && "
		}
		return fmt.Sprintf("(%s%s.T(%d) && %s.TC(0, %s))", pre, counterAlias, c.n, counterAlias, c.name(c.postWho))
	}
	if c.pre && c.depth != "" && c.preWho != "nil" {
		if c.loose {
			return fmt.Sprintf("%s.TCLW(%d, %s, %s)", counterAlias, c.n, c.preWho, c.depth)
		}
		return fmt.Sprintf("%s.TCW(%d, %s, %s)", counterAlias, c.n, c.preWho, c.depth)
	}
	if c.pre && c.loose {
		return fmt.Sprintf("%s.TCL(%d, %s)", counterAlias, c.n, c.preWho)
	}
	if c.pre {
		return fmt.Sprintf("%s.TC(%d, %s)", counterAlias, c.n, c.preWho)
	}
	return fmt.Sprintf("%s.T(%d)", counterAlias, c.n)
}

// stmtAt adds a charge statement at pos (prefix separates it from a
// preceding statement when it goes after one).
func (f *fileEmitter) stmtAt(pos token.Pos, prefix string, c check) {
	ps, ok := f.pending[pos]
	if !ok {
		ps = &pendingStmt{check: check{preWho: c.preWho, postWho: c.postWho, local: c.local, depth: c.depth}, prefix: prefix}
		f.pending[pos] = ps
		f.pendingOrder = append(f.pendingOrder, pos)
	}
	ps.n += c.n
	if c.pre {
		// Merged checks are loose only if all of them are.
		ps.loose = c.loose && (!ps.pre || ps.loose)
		ps.pre, ps.preWho = true, c.preWho
	}
	if c.entry != "" {
		ps.entry = c.entry
	}
	ps.flush = ps.flush || c.flush
	ps.quietFlush = ps.quietFlush || c.quietFlush
	if c.post {
		ps.post, ps.postWho, ps.inRange, ps.exitEntry = true, c.postWho, c.inRange, c.exitEntry
	}
}

// stmtSpot returns where statements go at a point of a statement kind
// (atFuncEntry, atBodyStart, beforeStmt, afterStmt, atFuncEnd, atBodyEnd),
// and what separates them from a statement before them.
func stmtSpot(at Point) (token.Pos, string) {
	switch at.Kind {
	case atFuncEntry, atBodyStart:
		switch b := at.Node.(type) {
		case *ast.BlockStmt:
			return b.Lbrace + 1, ""
		case *ast.CaseClause:
			return b.Colon + 1, ""
		case *ast.CommClause:
			return b.Colon + 1, ""
		}
	case beforeStmt:
		if l, ok := at.Node.(*ast.LabeledStmt); ok {
			switch l.Stmt.(type) {
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			default:
				return l.Stmt.Pos(), ""
			}
		}
		return at.Node.Pos(), ""
	case afterStmt:
		return at.Node.End(), "; "
	case atFuncEnd, atBodyEnd:
		return at.Node.(*ast.BlockStmt).Rbrace, "; "
	}
	panic(fmt.Sprintf("rewrite: point kind %d is not a statement spot", at.Kind))
}

func (f *fileEmitter) emitPoint(p *FuncPlan, at Point, c check) {
	n, chk := c.n, c.pre
	switch at.Kind {
	case atFuncEntry, atBodyStart, beforeStmt, atFuncEnd, atBodyEnd:
		if r, ok := at.Node.(*ast.ReturnStmt); ok && at.Kind == beforeStmt && c.post && f.lateFinalOK(p, r) {
			// Charge here, check after the results.
			f.lateFinal[r] = c.name(c.postWho)
			c.post = false
		}
		pos, prefix := stmtSpot(at)
		f.stmtAt(pos, prefix, c)
	case afterStmt:
		if isTerminating(at.Node.(ast.Stmt)) {
			return // nothing runs after it (and code there could break "missing return")
		}
		pos, prefix := stmtSpot(at)
		f.stmtAt(pos, prefix, c)
	case tickExpr:
		e := at.Node.(ast.Expr)
		if ch := f.ticked[e]; ch != nil {
			// Charged in the branches (emitBranchTicks).
			ch.ticks[e] += n
			return
		}
		t := c.tick()
		if tv, ok := f.info.Types[e]; !ok || !types.Identical(tv.Type, types.Typ[types.Bool]) && !types.Identical(tv.Type, types.Typ[types.UntypedBool]) {
			t += " == true" // untyped bool, so that it combines with a named bool type
		}
		f.Insert(e.Pos(), rankOpen, "("+t+" && (")
		f.Insert(e.End(), rankClose, "))")
	case caseValue:
		e := at.Node.(ast.Expr)
		sw := f.switchOf(e)
		// The tag's type, or, for a value that is not assignable to it
		// (it need only be comparable with it: an interface value
		// against a concrete tag, goja's switch on a float against
		// Values), the value's own type. (Untyped values are converted
		// to the tag's type, as the switch converts them. The tag's
		// type first: the value's may not be nameable here, an
		// unexported type of another package or a shadowed name.)
		valType := f.info.TypeOf(sw.Tag)
		if t := f.info.TypeOf(e); t != nil && !isUntyped(t) && !types.AssignableTo(t, valType) {
			valType = t
		}
		ts, ok := f.typeString(valType)
		ok = ok && f.nameableAt(valType, e.Pos())
		if !ok {
			f.approx = append(f.approx, fmt.Sprintf("%s: case value at %s: type %s cannot be named here; %d instructions not counted", p.Fn, f.fset.Position(e.Pos()), valType, n))
			return
		}
		if !f.generics {
			// Below go1.18: the value in an array indexed by the tick's
			// I, evaluated in V's order (the value, then the tick). A
			// function literal would shift the numbers of the
			// function's other literals (main.f.func2 for func1).
			f.Insert(e.Pos(), rankOpen, fmt.Sprintf("[1]%s{", ts))
			f.Insert(e.End(), rankClose, fmt.Sprintf("}[%s.I(%s)]", counterAlias, c.tick()))
			return
		}
		if c.post && c.exitEntry == "" && c.inRange == "" {
			// A final check after the charge, before the value's calls
			// (a range-over-func body's block: see tick): the tick as
			// V's first argument, which Go evaluates before the
			// value's calls.
			f.Insert(e.Pos(), rankOpen, fmt.Sprintf("%s.V[%s](%s.I(%s), ", counterAlias, ts, counterAlias, c.tick()))
		} else if chk && c.depth != "" && c.preWho != "nil" {
			f.Insert(e.Pos(), rankOpen, fmt.Sprintf("%s.VCW[%s](%d, %s, %s, ", counterAlias, ts, n, c.preWho, c.depth))
		} else if chk {
			f.Insert(e.Pos(), rankOpen, fmt.Sprintf("%s.VC[%s](%d, %s, ", counterAlias, ts, n, c.preWho))
		} else {
			f.Insert(e.Pos(), rankOpen, fmt.Sprintf("%s.V[%s](%d, ", counterAlias, ts, n))
		}
		f.Insert(e.End(), rankClose, ")")
	case typeCase:
		tt := at.Node.(*typeTest)
		sw := f.typeSwitchOf(tt.Clause)
		guard := f.guardExpr(sw, tt.Clause)
		if a, ok := sw.Assign.(*ast.ExprStmt); ok && guard == "" {
			// No variable holds the guard's value (switch f().(type)):
			// the switch binds one, which only the tests kprof adds use.
			if !f.guarded[sw] {
				f.guarded[sw] = true
				f.Insert(a.X.Pos(), rankBind, guardVar+" := ")
			}
			guard = guardVar
		}
		if guard == "" {
			f.approx = append(f.approx, fmt.Sprintf("%s: type switch at %s: cannot tell which type matched; %d instructions charged to the first", p.Fn, f.fset.Position(sw.Pos()), n))
			f.Insert(tt.Clause.Colon+1, rankStmt, p.chargeStmt(n))
			return
		}
		var types []string
		for _, t := range tt.Clause.List[tt.Index:] {
			types = append(types, f.text(t))
		}
		f.Insert(tt.Clause.Colon+1, rankStmt, fmt.Sprintf("switch %s.(type) { case %s: %s}; ", guard, strings.Join(types, ", "), p.chargeStmt(n)))
	case defaultClause:
		var body *ast.BlockStmt
		switch sw := at.Node.(type) {
		case *ast.TypeSwitchStmt:
			body = sw.Body
		case *ast.SwitchStmt:
			body = sw.Body
		}
		for _, s := range body.List {
			if cl := s.(*ast.CaseClause); cl.List == nil {
				f.stmtAt(cl.Colon+1, "", c)
				return
			}
		}
		f.Insert(body.Rbrace, rankStmt, "default: "+c.stmt())
	case valueCase:
		vt := at.Node.(*valueTest)
		key := vt.Clause
		if f.valueCases[key] == nil {
			tag := f.text(vt.Switch.Tag)
			if !pureOperand(vt.Switch.Tag) {
				// The tag is evaluated once, as before, into a variable
				// that the dispatch reads again (the switch has no init
				// statement, see constantSwitch).
				tag = tagVar
				if !f.bound[vt.Switch] {
					f.bound[vt.Switch] = true
					f.Insert(vt.Switch.Tag.Pos(), rankBind, tagVar+" := ")
					f.Insert(vt.Switch.Tag.End(), rankBind, "; "+tagVar)
				}
			}
			d := &valueDispatch{tag: tag, local: p.Local}
			if b, ok := f.info.TypeOf(vt.Switch.Tag).Underlying().(*types.Basic); ok && b.Info()&types.IsInteger != 0 && b.Info()&types.IsUntyped == 0 {
				d.ints = true
			}
			f.valueCases[key] = d
			f.valueOrder = append(f.valueOrder, key)
		}
		d := f.valueCases[key]
		val := vt.Clause.List[vt.Index]
		c := dispatchCase{text: f.text(val), n: n}
		if tv := f.info.Types[val]; tv.Value != nil {
			c.v, c.isInt = constant.Int64Val(constant.ToInt(tv.Value))
		}
		d.cases = append(d.cases, c)
	}
}

// bulkCharges charges each loop of p's function that clears an array or
// a slice ("for i := range a { a[i] = zero }", clearLoop) after it, len(a)
// times what its body start is charged, and inserts nothing in its body:
// a charge or a check there would keep the compiler from making the loop
// one clear of memory (as REP STOSQ or a call of memclr), which the plain
// build does. Its body runs exactly len(a) times unless a runtime error
// (a nil pointer on the way to a) stops it in the first iteration, which
// then leaves that iteration's charge uncounted, as such an error leaves
// what a function accumulated (package doc, "Where charges go"). The loop
// is a path without a check, whatever its length, like a call of copy.
func (f *fileEmitter) bulkCharges(p *FuncPlan) {
	inspectOwn(f.info, p.Body, func(n ast.Node) bool {
		r, ok := n.(*ast.RangeStmt)
		if !ok {
			return true
		}
		length, ok := f.clearLoop(r)
		if !ok {
			return true
		}
		pos := r.Body.Lbrace + 1
		ps := f.pending[pos]
		if ps == nil || ps.post || ps.flush || ps.entry != "" || ps.inRange != "" || ps.n <= 0 {
			return true
		}
		delete(f.pending, pos)
		f.Insert(r.End(), rankStmt, "; "+strings.TrimSuffix(chargeText(p.Local, fmt.Sprintf("%d*int64(%s)", ps.n, length)), "; "))
		return true
	})
}

// clearLoop reports whether r is "for i := range a { a[i] = zero }" (the
// shape cmd/compile turns into a clear of a's memory: a evaluated again
// in the body without effects, zero a constant, nil or an empty struct or
// array literal) with a an array or a slice variable, its elements not of
// size zero, and returns the source of a's length.
func (f *fileEmitter) clearLoop(r *ast.RangeStmt) (string, bool) {
	key, ok := r.Key.(*ast.Ident)
	if !ok || key.Name == "_" || f.info.ObjectOf(key) == nil {
		return "", false
	}
	if v, ok := r.Value.(*ast.Ident); r.Value != nil && (!ok || v.Name != "_") {
		return "", false
	}
	if len(r.Body.List) != 1 {
		return "", false
	}
	as, ok := r.Body.List[0].(*ast.AssignStmt)
	if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return "", false
	}
	ix, ok := as.Lhs[0].(*ast.IndexExpr)
	if !ok {
		return "", false
	}
	if id, ok := ast.Unparen(ix.Index).(*ast.Ident); !ok || f.info.ObjectOf(id) != f.info.ObjectOf(key) {
		return "", false
	}
	if !f.sameSafe(ix.X, r.X) || !f.isZero(as.Rhs[0]) || !f.universal(r.End(), "int64", "len") {
		return "", false
	}
	var elem types.Type
	length := ""
	switch u := f.info.TypeOf(r.X).Underlying().(type) {
	case *types.Array:
		elem, length = u.Elem(), strconv.FormatInt(u.Len(), 10)
	case *types.Slice:
		if _, ok := ast.Unparen(r.X).(*ast.Ident); !ok {
			return "", false
		}
		elem, length = u.Elem(), "len("+f.text(r.X)+")"
	default:
		return "", false
	}
	if sizeUnknown(elem) || amd64Sizes.Sizeof(elem) == 0 {
		return "", false // zero-size elements: the compiler clears nothing, and len(a) may be huge
	}
	return length, true
}

// universal reports whether each name denotes the predeclared object of
// that name at pos (a local len or int64 may hide it).
func (f *fileEmitter) universal(pos token.Pos, names ...string) bool {
	for _, name := range names {
		if obj, ok := f.lookup(pos, name); !ok || obj != types.Universe.Lookup(name) {
			return false
		}
	}
	return true
}

// lookup returns the object that name denotes at pos in the file (nil if
// none); false if pos is in no scope of the package.
func (f *fileEmitter) lookup(pos token.Pos, name string) (types.Object, bool) {
	scope := f.pkg.Scope().Innermost(pos)
	if scope == nil {
		return nil, false
	}
	_, obj := scope.LookupParent(name, pos)
	return obj, true
}

// sameSafe reports whether x and y are the same variable, or the same
// field of the same variable, as written (cmd/compile's ir.SameSafeExpr,
// for the shapes clearLoop accepts).
func (f *fileEmitter) sameSafe(x, y ast.Expr) bool {
	x, y = ast.Unparen(x), ast.Unparen(y)
	switch x := x.(type) {
	case *ast.Ident:
		y, ok := y.(*ast.Ident)
		return ok && f.info.ObjectOf(x) != nil && f.info.ObjectOf(x) == f.info.ObjectOf(y)
	case *ast.SelectorExpr:
		y, ok := y.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		sx, sy := f.info.Selections[x], f.info.Selections[y]
		return sx != nil && sy != nil && sx.Kind() == types.FieldVal && sy.Kind() == types.FieldVal &&
			sx.Obj() == sy.Obj() && f.sameSafe(x.X, y.X)
	case *ast.StarExpr:
		y, ok := y.(*ast.StarExpr)
		return ok && f.sameSafe(x.X, y.X)
	}
	return false
}

// isZero reports whether e is a zero value the compiler clears memory for:
// a constant zero, nil, or an empty struct or array literal.
func (f *fileEmitter) isZero(e ast.Expr) bool {
	tv, ok := f.info.Types[e]
	if !ok {
		return false
	}
	if tv.IsNil() {
		return true
	}
	if v := tv.Value; v != nil {
		switch v.Kind() {
		case constant.Bool:
			return !constant.BoolVal(v)
		case constant.String:
			return constant.StringVal(v) == ""
		case constant.Int, constant.Float, constant.Complex:
			return constant.Sign(v) == 0 && constant.Sign(constant.Imag(v)) == 0
		}
		return false
	}
	if cl, ok := ast.Unparen(e).(*ast.CompositeLit); ok && len(cl.Elts) == 0 {
		switch tv.Type.Underlying().(type) {
		case *types.Struct, *types.Array:
			return true
		}
	}
	return false
}

// emitPops restores the stack depth before every return of p's function
// (results that call functions are evaluated first) and at its end, but
// where a function that pushes itself lazily has not pushed (FuncPlan.NoPop).
func (f *fileEmitter) emitPops(p *FuncPlan) {
	ast.Inspect(p.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			f.emitReturnPop(p, n)
		}
		return true
	})
	if p.Fn.Signature.Results().Len() == 0 && !isTerminating(lastStmt(p.Body)) && !p.NoEndPop {
		f.Insert(p.Body.Rbrace, rankPop, "; "+strings.TrimSuffix(popStmt(p), "; "))
	}
}

// emitReturnPop restores the stack depth at return statement r: after its
// results, where they call functions — through the function's named
// results where a result is too big for registers or there are more than
// four (emitNamedReturn), else through a wrapper (emitWrappedReturn), else
// named — and before them where neither can be written.
func (f *fileEmitter) emitReturnPop(p *FuncPlan, r *ast.ReturnStmt) {
	if _, late := f.lateFinal[r]; late {
		pop := popStmt(p)
		if p.NoPop[r.Return] {
			pop = ""
		}
		f.emitLateFinal(p, r, pop)
		return
	}
	if p.NoPop[r.Return] {
		return
	}
	if len(r.Results) > 0 && callsIn(f.info, exprNodes(r.Results)...) {
		res := p.Fn.Signature.Results()
		big := res.Len() > 4 || !registerable(res)
		if big && f.emitNamedReturn(p, r) || res.Len() <= 4 && f.emitWrappedReturn(p, r) || f.emitNamedReturn(p, r) || f.emitTempReturn(p, r) {
			return
		}
	}
	f.Insert(r.Pos(), rankPop, popStmt(p))
}

// emitWrappedReturn rewrites "return X0, X1" as "return
// counter.Ret2[T0, T1](depth).Of(X0, X1)" (PopRet2 where the function pops
// by count; R1 or Pop1 where the type cannot be named but is the result's),
// and "return f()" with several results through temporaries. It reports
// false if it can write neither.
func (f *fileEmitter) emitWrappedReturn(p *FuncPlan, r *ast.ReturnStmt) bool {
	k := p.Fn.Signature.Results().Len()
	if tv, ok := f.info.Types[r.Results[0]]; ok && len(r.Results) == 1 {
		if tup, ok := tv.Type.(*types.Tuple); ok && tup.Len() > 1 {
			// return f() with several results: as the compiler
			// would, through temporaries, then restore the depth.
			var tmps []string
			for i := 0; i < tup.Len(); i++ {
				tmps = append(tmps, fmt.Sprintf("%s%d", resultVar, i))
			}
			list := strings.Join(tmps, ", ")
			f.Replace(r.Pos(), r.Results[0].Pos(), rankOpen, fmt.Sprintf("{ %s := ", list))
			f.Insert(r.End(), rankClose, fmt.Sprintf("; %sreturn %s }", popStmt(p), list))
			return true
		}
	}
	if !f.generics {
		return false // the wrappers below are generic
	}
	if names, ok := f.resultTypes(p); ok && f.namesTypes(r.Pos(), names) {
		open := fmt.Sprintf("%s.Ret%d[%s](%s).Of(", counterAlias, k, strings.Join(names, ", "), depthVar)
		if p.PopByCount {
			open = fmt.Sprintf("%s.PopRet%d[%s]{}.Of(", counterAlias, k, strings.Join(names, ", "))
		}
		f.Insert(r.Results[0].Pos(), rankOpen, open)
	} else if tv, ok := f.info.Types[r.Results[0]]; ok && k == 1 && types.Identical(tv.Type, p.Fn.Signature.Results().At(0).Type()) {
		open := fmt.Sprintf("%s.R1(%s, ", counterAlias, depthVar)
		if p.PopByCount {
			open = fmt.Sprintf("%s.Pop1(", counterAlias)
		}
		f.Insert(r.Results[0].Pos(), rankOpen, open)
	} else {
		return false
	}
	f.Insert(r.Results[len(r.Results)-1].End(), rankClose, ")")
	return true
}

// emitNamedReturn rewrites "return X0, X1" as "{ R0, R1 = X0, X1; <pop>return }",
// R0 and R1 being the function's results, named (namedResults): the results
// are evaluated, calls included, and assigned where the plain return
// assigns them before the depth is restored. Where a result's type is too
// big for the compiler to keep in registers, that saves the copies the
// wrappers of Ret1 … Ret4 make, each read back right after it is written.
// It reports false if the results cannot be named at r.
func (f *fileEmitter) emitNamedReturn(p *FuncPlan, r *ast.ReturnStmt) bool {
	names, ok := f.namedResults(p, r.Pos())
	if !ok {
		return false
	}
	f.Replace(r.Pos(), r.Results[0].Pos(), rankOpen, fmt.Sprintf("{ %s = ", strings.Join(names, ", ")))
	f.Insert(r.End(), rankClose, fmt.Sprintf("; %sreturn }", popStmt(p)))
	return true
}

// emitTempReturn rewrites "return X0, X1" as "{ var _kr0 T0; var _kr1 T1;
// _kr0, _kr1 = X0, X1; <pop>return _kr0, _kr1 }" where the results can be
// neither wrapped (a file below go1.18) nor named (a result is blank or
// hidden at r). It reports false if a result type cannot be named at r.
func (f *fileEmitter) emitTempReturn(p *FuncPlan, r *ast.ReturnStmt) bool {
	names, ok := f.resultTypes(p)
	if !ok || !f.namesTypes(r.Pos(), names) || len(r.Results) != len(names) {
		return false
	}
	var decls, tmps []string
	for i, t := range names {
		tmp := fmt.Sprintf("%s%d", resultVar, i)
		decls = append(decls, fmt.Sprintf("var %s %s; ", tmp, t))
		tmps = append(tmps, tmp)
	}
	list := strings.Join(tmps, ", ")
	f.Replace(r.Pos(), r.Results[0].Pos(), rankOpen, fmt.Sprintf("{ %s%s = ", strings.Join(decls, ""), list))
	f.Insert(r.End(), rankClose, fmt.Sprintf("; %sreturn %s }", popStmt(p), list))
	return true
}

// namedResults returns the names of the results of p's function, as seen
// at pos, naming them (namedResultVar) if they have no names: false if a
// result is blank or a variable of the same name hides it at pos.
func (f *fileEmitter) namedResults(p *FuncPlan, pos token.Pos) ([]string, bool) {
	var ft *ast.FuncType
	switch s := p.Fn.Syntax().(type) {
	case *ast.FuncDecl:
		ft = s.Type
	case *ast.FuncLit:
		ft = s.Type
	}
	if ft == nil || ft.Results == nil || len(ft.Results.List) == 0 {
		return nil, false
	}
	res := p.Fn.Signature.Results()
	var names []string
	if len(ft.Results.List[0].Names) == 0 {
		for i := range res.Len() {
			names = append(names, fmt.Sprintf("%s%d", namedResultVar, i))
		}
		if !f.renamed[ft] {
			f.renamed[ft] = true
			if !ft.Results.Opening.IsValid() {
				f.Insert(ft.Results.Pos(), rankOpen, "(")
				f.Insert(ft.Results.End(), rankClose, ")")
			}
			for i, field := range ft.Results.List {
				f.Insert(field.Type.Pos(), rankOpen, names[i]+" ")
			}
		}
		return names, true
	}
	for i := range res.Len() {
		v := res.At(i)
		if obj, ok := f.lookup(pos, v.Name()); !ok || v.Name() == "_" || obj != v {
			return nil, false
		}
		names = append(names, v.Name())
	}
	return names, true
}

// registerable reports whether the compiler keeps values of every type of
// t in registers (cmd/compile's ssagen.TypeOK, with amd64's sizes, whatever
// the target: the rewritten source does not depend on it): at most four
// words, structs of at most four such fields, arrays of at most one such
// element.
func registerable(t *types.Tuple) bool {
	for v := range t.Variables() {
		if !registerableType(v.Type()) {
			return false
		}
	}
	return true
}

var amd64Sizes = types.SizesFor("gc", "amd64")

func registerableType(t types.Type) bool {
	if sizeUnknown(t) {
		return true // a type parameter's size: the wrappers, as before
	}
	if amd64Sizes.Sizeof(t) > 4*8 {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		return u.Len() <= 1 && registerableType(u.Elem())
	case *types.Struct:
		if u.NumFields() > 4 {
			return false
		}
		for v := range u.Fields() {
			if !registerableType(v.Type()) {
				return false
			}
		}
	}
	return true
}

// sizeUnknown reports whether t's size depends on a type parameter.
func sizeUnknown(t types.Type) bool {
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return true
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		return sizeUnknown(u.Elem())
	case *types.Struct:
		for v := range u.Fields() {
			if sizeUnknown(v.Type()) {
				return true
			}
		}
	}
	return false
}

// popStmt is the statement that takes p's function off the reified stack
// where it returns.
func popStmt(p *FuncPlan) string {
	if p.PopByCount {
		return fmt.Sprintf("%s.Pop(); ", counterAlias)
	}
	return fmt.Sprintf("%s.R(%s); ", counterAlias, depthVar)
}

// lateFinalOK reports whether the final check of return statement r must
// and can come after its results: they hold charges (ticks of &&, ||
// operands) that would otherwise run after the check and be sampled in the
// caller, and every result is an expression of its own whose type can be
// named at r.
func (f *fileEmitter) lateFinalOK(p *FuncPlan, r *ast.ReturnStmt) bool {
	if p.RangeExits[r] > 0 {
		return false // its check samples at a depth of its own (check.inRange)
	}
	res := returnsFrom(p.Fn).Signature.Results()
	if len(r.Results) == 0 || len(r.Results) != res.Len() {
		return false
	}
	if !p.resultTicks(r) {
		return false
	}
	names, ok := f.resultTypes(p)
	return ok && f.namesTypes(r.Pos(), names)
}

// emitLateFinal rewrites "return X0, X1" as
// "{ var _kv0 T0 = X0; var _kv1 T1 = X1; <check>; <pop>return _kv0, _kv1 }".
// (kprof's inliner costs that as the plain return statement: lateVar.)
func (f *fileEmitter) emitLateFinal(p *FuncPlan, r *ast.ReturnStmt, pop string) {
	names, _ := f.resultTypes(p)
	tmps := make([]string, len(r.Results))
	for i := range r.Results {
		tmps[i] = fmt.Sprintf("%s%d", lateVar, i)
		decl := fmt.Sprintf("var %s %s = ", tmps[i], names[i])
		if i == 0 {
			f.Replace(r.Pos(), r.Results[0].Pos(), rankOpen, "{ "+decl)
		} else {
			f.Replace(r.Results[i-1].End(), r.Results[i].Pos(), rankOpen, "; "+decl)
		}
	}
	check := fmt.Sprintf("if %s.Due() { %s.S(%s) }; ", counterAlias, counterAlias, f.lateFinal[r])
	if p.Local {
		check = fmt.Sprintf("if %s.D(%s) { %s.S(%s) }; ", counterAlias, localVar, counterAlias, f.lateFinal[r])
	}
	f.Insert(r.End(), rankClose, fmt.Sprintf("; %s%sreturn %s }", check, pop, strings.Join(tmps, ", ")))
}

// namesTypes reports whether every identifier in the type expressions
// (source text) denotes a type or a package at pos: a result or local
// variable may shadow a type name (func f() (n int, error error)).
func (f *fileEmitter) namesTypes(pos token.Pos, exprs []string) bool {
	scope := f.pkg.Scope().Innermost(pos)
	if scope == nil {
		return false
	}
	for _, src := range exprs {
		e, err := parser.ParseExpr(src)
		if err != nil {
			return false
		}
		ok := true
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, isID := n.X.(*ast.Ident); isID {
					if _, obj := scope.LookupParent(id.Name, pos); obj != nil {
						if _, isPkg := obj.(*types.PkgName); !isPkg {
							ok = false
						}
					}
				}
				return false // the selected name is in the package's scope
			case *ast.Ident:
				if _, obj := scope.LookupParent(n.Name, pos); obj != nil {
					if _, isType := obj.(*types.TypeName); !isType {
						ok = false
					}
				}
			}
			return ok
		})
		if !ok {
			return false
		}
	}
	return true
}

// resultTypes names the result types of p's function as source text.
func (f *fileEmitter) resultTypes(p *FuncPlan) ([]string, bool) {
	var names []string
	res := returnsFrom(p.Fn).Signature.Results()
	for i := 0; i < res.Len(); i++ {
		s, ok := f.typeString(res.At(i).Type())
		if !ok {
			return nil, false
		}
		names = append(names, s)
	}
	return names, true
}

// callsIn reports whether any of nodes calls a function (conversions and
// builtins other than panic do not count; nor do function literals, which
// run when called).
func callsIn(info *types.Info, nodes ...ast.Node) bool {
	found := false
	for _, e := range nodes {
		if e == nil { // (a nil Stmt or Expr: no init, no condition)
			continue
		}
		ast.Inspect(e, func(n ast.Node) bool {
			if found {
				return false
			}
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				if tv, ok := info.Types[n.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
					return true
				}
				found = true
			}
			return true
		})
	}
	return found
}

// exprNodes returns es as nodes.
func exprNodes(es []ast.Expr) []ast.Node {
	ns := make([]ast.Node, len(es))
	for i, e := range es {
		ns[i] = e
	}
	return ns
}

// typeString names t as source text valid in this file, if it can.
func (f *fileEmitter) typeString(t types.Type) (string, bool) {
	ok := true
	s := types.TypeString(t, func(p *types.Package) string {
		if p == f.pkg {
			return ""
		}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != p.Path() {
				continue
			}
			if imp.Name != nil {
				if imp.Name.Name == "_" || imp.Name.Name == "." {
					break
				}
				return imp.Name.Name
			}
			return p.Name()
		}
		ok = false
		return p.Name()
	})
	if strings.Contains(s, "struct{") || strings.Contains(s, "interface{") && strings.Contains(s, ";") {
		// Anonymous struct and interface types print field names and
		// methods that may not be valid here (unexported from elsewhere).
		return s, ok && !strings.Contains(s, "func(")
	}
	return s, ok
}

func (f *fileEmitter) text(n ast.Node) string {
	return f.Text(n.Pos(), n.End())
}

func (f *fileEmitter) switchOf(e ast.Expr) *ast.SwitchStmt {
	var sw *ast.SwitchStmt
	ast.Inspect(f.file, func(n ast.Node) bool {
		if s, ok := n.(*ast.SwitchStmt); ok && s.Body.Pos() <= e.Pos() && e.End() <= s.Body.End() {
			sw = s
		}
		return true
	})
	return sw
}

func (f *fileEmitter) typeSwitchOf(cl *ast.CaseClause) *ast.TypeSwitchStmt {
	var sw *ast.TypeSwitchStmt
	ast.Inspect(f.file, func(n ast.Node) bool {
		if s, ok := n.(*ast.TypeSwitchStmt); ok {
			for _, c := range s.Body.List {
				if c == cl {
					sw = s
				}
			}
		}
		return sw == nil
	})
	return sw
}

// guardExpr returns source text for the value a type switch tests, valid
// at the start of clause cl, or "" if there is none without re-evaluating
// an expression.
func (f *fileEmitter) guardExpr(sw *ast.TypeSwitchStmt, cl *ast.CaseClause) string {
	switch a := sw.Assign.(type) {
	case *ast.AssignStmt:
		// In a clause that lists several types the bound variable has the
		// guard's interface type and value.
		if id, ok := a.Lhs[0].(*ast.Ident); ok && id.Name != "_" && len(cl.List) > 1 {
			return id.Name
		}
		ta := a.Rhs[0].(*ast.TypeAssertExpr)
		if id, ok := ta.X.(*ast.Ident); ok {
			return id.Name
		}
	case *ast.ExprStmt:
		ta := a.X.(*ast.TypeAssertExpr)
		if id, ok := ta.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

func lastStmt(b *ast.BlockStmt) ast.Stmt {
	if b == nil || len(b.List) == 0 {
		return nil
	}
	return b.List[len(b.List)-1]
}

// isTerminating approximates the spec's terminating statements, enough to
// know whether code may be appended after s at the end of a function.
func isTerminating(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.GOTO
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	case *ast.BlockStmt:
		return isTerminating(lastStmt(s))
	case *ast.LabeledStmt:
		return isTerminating(s.Stmt)
	case *ast.ForStmt:
		return s.Cond == nil && !hasBreak(s)
	case *ast.IfStmt:
		return s.Else != nil && isTerminating(lastStmt(s.Body)) && isTerminating(s.Else)
	case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
		return clausesTerminate(s)
	}
	return false
}

func hasBreak(s ast.Stmt) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.BREAK {
			found = true
		}
		_, lit := n.(*ast.FuncLit)
		return !found && !lit
	})
	return found
}

func clausesTerminate(s ast.Stmt) bool {
	var body *ast.BlockStmt
	hasDefault := false
	switch s := s.(type) {
	case *ast.SwitchStmt:
		body = s.Body
	case *ast.TypeSwitchStmt:
		body = s.Body
	case *ast.SelectStmt:
		body = s.Body
		hasDefault = true
	}
	if hasBreak(s) {
		return false
	}
	for _, c := range body.List {
		var list []ast.Stmt
		switch c := c.(type) {
		case *ast.CaseClause:
			list = c.Body
			if c.List == nil {
				hasDefault = true
			}
		case *ast.CommClause:
			list = c.Body
		}
		if len(list) == 0 {
			return false
		}
		last := list[len(list)-1]
		if b, ok := last.(*ast.BranchStmt); ok && b.Tok == token.FALLTHROUGH {
			continue
		}
		if !isTerminating(last) {
			return false
		}
	}
	return hasDefault
}

// isUntyped reports whether t is the type of an untyped constant or of nil.
func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0 || ok && b.Kind() == types.UntypedNil
}

// nameableAt reports whether the named types in t can be written at pos:
// none is an unexported type of another package, and none of the
// package's own is shadowed there by another name.
func (f *fileEmitter) nameableAt(t types.Type, pos token.Pos) bool {
	switch t := t.(type) {
	case *types.Named:
		if !f.objNameableAt(t.Obj(), pos) {
			return false
		}
		for i := range t.TypeArgs().Len() {
			if !f.nameableAt(t.TypeArgs().At(i), pos) {
				return false
			}
		}
	case *types.Alias:
		return f.objNameableAt(t.Obj(), pos)
	case *types.Pointer:
		return f.nameableAt(t.Elem(), pos)
	case *types.Slice:
		return f.nameableAt(t.Elem(), pos)
	case *types.Array:
		return f.nameableAt(t.Elem(), pos)
	case *types.Chan:
		return f.nameableAt(t.Elem(), pos)
	case *types.Map:
		return f.nameableAt(t.Key(), pos) && f.nameableAt(t.Elem(), pos)
	}
	return true
}

// objNameableAt reports whether the type name obj can be written at pos.
func (f *fileEmitter) objNameableAt(obj *types.TypeName, pos token.Pos) bool {
	if obj.Pkg() == nil {
		return true // (error, comparable)
	}
	if obj.Pkg() != f.pkg {
		return obj.Exported()
	}
	// The package's own, or a local type: its name must lead to it.
	if scope := f.pkg.Scope().Innermost(pos); scope != nil {
		if _, o := scope.LookupParent(obj.Name(), pos); o != obj {
			return false
		}
	}
	return true
}
