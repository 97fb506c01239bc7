package demo

import (
	"fmt"
	"math"
)

// Service is one row of the services table.
type Service struct {
	Name   string  `json:"name"`
	Region string  `json:"region"`
	Status string  `json:"status"`
	CPU    float64 `json:"cpu_percent"`
	MemMiB int     `json:"mem_mib"`
	RPS    int     `json:"rps"`
}

var regions = []string{"all regions", "eu-west", "us-east", "ap-south"}

func seedServices() []Service {
	return []Service{
		{"api-gateway", "eu-west", "ok", 41.5, 512, 1840},
		{"auth", "eu-west", "ok", 12.0, 256, 920},
		{"billing", "us-east", "degraded", 77.3, 1024, 310},
		{"search", "us-east", "ok", 55.1, 2048, 1210},
		{"payments", "us-east", "ok", 23.8, 768, 450},
		{"notifications", "ap-south", "ok", 8.4, 128, 260},
		{"inventory", "ap-south", "down", 0, 0, 0},
		{"reports", "eu-west", "ok", 31.2, 1536, 75},
	}
}

// timelineMinutes is the length of the incident timeline.
const timelineMinutes = 60

// cpuSeries is the CPU load over the timeline for a few services.
func cpuSeries() map[string][]float64 {
	out := map[string][]float64{}
	for i, name := range []string{"api-gateway", "billing", "search"} {
		vals := make([]float64, timelineMinutes)
		for m := range vals {
			base := 30 + 15*float64(i)
			spike := 0.0
			if name == "billing" && m >= 35 && m <= 45 {
				spike = 40
			}
			vals[m] = math.Round((base+10*math.Sin(float64(m)/6+float64(i))+spike)*10) / 10
		}
		out[name] = vals
	}
	return out
}

// logLines is the log of the timeline: a few lines per minute.
func logLines() []string {
	var lines []string
	for m := 0; m < timelineMinutes; m++ {
		ts := fmt.Sprintf("12:%02d", m)
		lines = append(lines, ts+" api-gateway  200 GET /v1/orders 12ms")
		switch {
		case m == 35:
			lines = append(lines, ts+" billing      WARN queue depth 1200 (threshold 1000)")
		case m > 35 && m <= 45:
			lines = append(lines, ts+" billing      ERROR upstream timeout after 3000ms")
		case m == 46:
			lines = append(lines, ts+" billing      INFO recovered; queue drained")
		case m%10 == 0:
			lines = append(lines, ts+" inventory    ERROR health check failed: connection refused")
		default:
			lines = append(lines, ts+" search       INFO reindexed 120 documents")
		}
	}
	return lines
}

// logLineOfMinute returns the first log line of minute m.
func logLineOfMinute(m int) int { return 2 * m }
