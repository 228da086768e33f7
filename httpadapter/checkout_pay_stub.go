//go:build !checkout_wip

package httpadapter

// routeCheckouts registers nothing until the Service's payer-side checkout
// API lands (build tag checkout_wip builds the checkout app).
func (p *payHandler) routeCheckouts() {}
