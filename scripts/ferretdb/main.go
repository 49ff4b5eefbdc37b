// Command ferretdb serves the MongoDB wire protocol for yardstick's tests:
// FerretDB v1 embedded through its public package, storing data in
// PostgreSQL (-postgresql-url) or in SQLite files under -sqlite-dir.
// scripts/services builds and starts it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:57017", "TCP address to serve the MongoDB protocol on")
	dir := flag.String("sqlite-dir", "data", "directory for the SQLite databases")
	pg := flag.String("postgresql-url", "", "store data in this PostgreSQL database instead of SQLite")
	tlsAddr := flag.String("tls-listen-addr", "", "also serve TLS on this address (needs -tls-cert and -tls-key)")
	tlsCert := flag.String("tls-cert", "", "PEM certificate for -tls-listen-addr")
	tlsKey := flag.String("tls-key", "", "PEM private key for -tls-listen-addr")
	flag.Parse()

	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	config := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
	}
	if *tlsAddr != "" {
		config.Listener.TLS = *tlsAddr
		config.Listener.TLSCertFile = *tlsCert
		config.Listener.TLSKeyFile = *tlsKey
	}
	if *pg != "" {
		config.Handler = "postgresql"
		config.PostgreSQLURL = *pg
		config.SQLiteURL = ""
	}
	f, err := ferretdb.New(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
