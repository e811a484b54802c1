package config

import "strconv"

// RouteMetricName is the route label of routes[i] in the metrics: its name,
// or "routes[i]" for an unnamed route (the key its errors carry), so that
// every route is told apart. An unnamed route's counts follow its position
// across a reload; name routes to keep them with the route.
func RouteMetricName(name string, i int) string {
	if name != "" {
		return name
	}
	return "routes[" + strconv.Itoa(i) + "]"
}
