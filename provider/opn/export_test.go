package opn

// DecodeQR exposes decodeQR to the external tests.
var DecodeQR = decodeQR
