package sim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Shrink looks for a shorter plan that fails the same check as failed, a
// failed run: it removes ever smaller runs of steps (keeping the first
// merchant's), and then the faults of the steps left, while the run still
// fails that check, within budget runs. It returns the shortest failing
// run it found (failed itself when none is shorter).
func Shrink(opts Options, failed *Result, budget int) *Result {
	if failed.Failure == nil {
		return failed
	}
	check := failed.Failure.Check
	best := failed
	runs := 0
	try := func(ops []Op) bool {
		if runs >= budget {
			return false
		}
		runs++
		o := opts
		o.Plan = &Plan{Ops: ops}
		o.Trace = nil
		res := Run(o, nil)
		if res.Failure != nil && res.Failure.Check == check {
			best = res
			return true
		}
		return false
	}
	ops := best.Plan.Ops
	// Steps after the failure never ran: drop them first.
	if n := best.Steps; n > 0 && n < len(ops) && best.Failure.Step >= 0 {
		if try(append([]Op(nil), ops[:n]...)) {
			ops = best.Plan.Ops
		}
	}
	for chunk := len(ops) / 2; chunk >= 1 && runs < budget; {
		removed := false
		for start := 1; start < len(ops) && runs < budget; {
			end := min(start+chunk, len(ops))
			cand := append(append([]Op(nil), ops[:start]...), ops[end:]...)
			if try(cand) {
				ops, removed = best.Plan.Ops, true
				continue
			}
			start = end
		}
		if !removed {
			chunk /= 2
		}
	}
	for i := range ops {
		if ops[i].Fault == "" || runs >= budget {
			continue
		}
		cand := append([]Op(nil), ops...)
		cand[i].Fault = ""
		if try(cand) {
			ops = best.Plan.Ops
		}
	}
	return best
}

// PlanText lists a plan's steps, one a line.
func PlanText(p *Plan) string {
	var b strings.Builder
	for i, op := range p.Ops {
		fmt.Fprintf(&b, "  %3d  %s\n", i, op)
	}
	return b.String()
}

// PlanJSON is a plan as JSON, for -plan of the command.
func PlanJSON(p *Plan) string {
	b, err := json.Marshal(p)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
