package wire

import "time"

// TimeLayout is the wire format of timestamps: UTC, millisecond precision.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in the contract's timestamp format.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
