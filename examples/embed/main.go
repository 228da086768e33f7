// Command embed is the smallest complete host of paykit: the merchant API,
// the payer pages, the operator API and Provider callbacks on one mux, the
// sandbox PSP standing in for a real Provider, and the background work.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	if err := serve(ctx, ln, os.Getenv("PAYKIT_OPERATOR_TOKEN"), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// serve runs paykit on ln until ctx ends, then shuts down gracefully. An
// empty operatorToken is drawn at random and printed.
func serve(ctx context.Context, ln net.Listener, operatorToken string, out io.Writer) error {
	base := "http://" + ln.Addr().String()

	// The sandbox PSP stands in for a Provider's own host, at /sandbox; its
	// adapter calls the PSP's API over HTTP, as a real Provider's would.
	pspKey := rand.Text() // authenticates the adapter and signs callbacks; never published
	psp := sandbox.NewPSP(sandbox.PSPConfig{
		BaseURL:     base + "/sandbox",
		APIKey:      pspKey,
		CallbackURL: base + "/providers/sandbox/webhooks",
	})
	adapter := sandbox.New(sandbox.Config{BaseURL: base + "/sandbox", APIKey: pspKey})

	// The memory Store lives and dies with the process. A database (package
	// store/sqlstore) also needs keys that outlive the process, or New
	// refuses it; see "Use a database" in the README:
	//
	//	store, err := sqlstore.OpenWith(ctx, "sqlite:paykit.db", sqlstore.Options{MaxConns: 8})
	//	err = store.Migrate(ctx)
	//	accountKeys, err := keyring.New("k1", map[string][]byte{"k1": accountKey})
	//	paykit.Config{Store: store, SigningKey: signingKey, AccountKeys: accountKeys, ...}
	svc, err := paykit.New(paykit.Config{
		Store:     memory.New(),
		Routing:   sandbox.DefaultRouting(), // test-environment methods and payouts go to the sandbox
		Providers: map[string]paykit.Provider{sandbox.Name: adapter},
		PublicURL: base, // payer links point at base + "/pay/..."
	})
	if err != nil {
		return err
	}

	// A merchant and a test key pair to try it with.
	m, err := svc.CreateMerchant(ctx, "embed", "Kedai Kopi")
	if err != nil {
		return err
	}
	key, err := svc.CreateAPIKey(ctx, "embed", m.ID, paykit.Test)
	if err != nil {
		return err
	}
	tokenShown := "(from PAYKIT_OPERATOR_TOKEN)"
	if operatorToken == "" {
		operatorToken = rand.Text()
		tokenShown = operatorToken
	}

	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{})))
	mux.Handle("/pay/", http.StripPrefix("/pay", httpadapter.NewPayHandler(svc, httpadapter.PayOptions{})))
	mux.Handle("/operator/", http.StripPrefix("/operator", httpadapter.NewOperatorAPI(svc, httpadapter.OperatorOptions{
		Tokens: map[string]string{"operator": operatorToken},
	})))
	mux.Handle("/providers/", http.StripPrefix("/providers", httpadapter.NewProviderCallbacks(svc, httpadapter.CallbackOptions{})))
	mux.Handle("/sandbox/", http.StripPrefix("/sandbox", psp))

	fmt.Fprintf(out, "paykit listening on %s\n", base)
	fmt.Fprintf(out, "operator token:  %s\n", tokenShown)
	fmt.Fprintf(out, "merchant:        %s\n", m.ID)
	fmt.Fprintf(out, "test public key: %s\n", key.PublicKey)
	fmt.Fprintf(out, "test secret key: %s\n", key.SecretKey)

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	g, ctx := errgroup.WithContext(ctx)
	// Durable background work: recovery of payments and payouts whose
	// outcome is unknown, expiry, webhook deliveries.
	g.Go(func() error { return svc.Run(ctx) })
	// The PSP's signed callbacks to /providers/sandbox/webhooks.
	g.Go(func() error { psp.Run(ctx, time.Second); return nil })
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	})
	return g.Wait()
}
