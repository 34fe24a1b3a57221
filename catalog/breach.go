package catalog

// SLABreached reports whether the component's observed health breaks its SLA: availability
// below, or response time or error rate above, the objective. An objective of 0 is not set (as in
// ComponentScore); a component without reported health or SLA breaks nothing.
func (c *Component) SLABreached() bool {
	h, s := c.Health, c.Sla
	if h == nil || s == nil || !reportsHealth(c) {
		return false
	}
	return (s.Availability > 0 && h.Availability < s.Availability) ||
		(s.ResponseTime > 0 && h.ResponseTime > s.ResponseTime) ||
		(s.ErrorRate > 0 && h.ErrorRate > s.ErrorRate)
}
