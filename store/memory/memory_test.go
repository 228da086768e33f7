package memory_test

import (
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
	"github.com/paykit/paykit/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) paykit.Store { return memory.New() })
}
