package window

// MDThresholdForTest exposes mdThreshold to the external tests.
var MDThresholdForTest = mdThreshold
