package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
	"github.com/petstore-go/petstore"
)

// wrapError describes err, returned by the operation op, the way the
// petstore.Store contract asks: when ctx is done it wraps ctx.Err(); when the
// database cannot serve now but may later, it wraps petstore.ErrUnavailable.
// The texts it includes come from pgx and the server, which never include the
// connection string's password.
func wrapError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// pgx may report a cancelled query as the server's "canceling
		// statement due to user request" or as a closed connection; the
		// cause is the context either way.
		return fmt.Errorf("pgstore: %s: %w (%v)", op, ctxErr, err)
	}
	if unavailable(err) {
		return fmt.Errorf("pgstore: %s: %w: %w", op, petstore.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "26000" || pgErr.Code == "42P05") && // invalid_sql_statement_name, duplicate_prepared_statement
		strings.Contains(pgErr.Message, `"stmtcache_`) {
		return fmt.Errorf("pgstore: %s: %w; a statement that pgx prepared under a name is missing, or already there, on the "+
			"server connection, as happens through a pooler in transaction mode such as PgBouncer: "+
			"add default_query_exec_mode=cache_describe to the database URL", op, err)
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// unavailable reports whether err means that the database cannot serve the
// request now but may be able to later: it could not be reached, the
// connection broke or timed out, the pool is closed, the server is shutting
// down, starting up, out of connections or read-only, or the statement lost
// a race that a retry would win.
func unavailable(err error) bool {
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true // whatever the reason, no connection could be opened
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "53") {
			return true // connection_exception; insufficient_resources: too many connections, out of memory
		}
		switch pgErr.Code {
		case "57P01", // admin_shutdown
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now: starting up or in recovery
			"57014", // query_canceled: statement_timeout (a done context is handled before)
			"55P03", // lock_not_available: lock_timeout
			"40001", // serialization_failure
			"40P01", // deadlock_detected
			"25006": // read_only_sql_transaction: connected to a standby, as after a failover
			return true
		}
		return false
	}
	var netErr net.Error // a syscall.Errno, such as ECONNRESET, is one too
	return errors.As(err, &netErr) ||
		pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err) ||
		errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
