//go:build ignore

// steer.c: the XDP program of simdedge's AF_XDP transport.
//
// It runs on every frame the interface receives. IPv4 TCP frames to the
// service port and UDP frames to the datagram port, addressed to the
// configured address, are redirected into the AF_XDP socket bound to the
// frame's RX queue (the XSKMAP is indexed by rx_queue_index). Everything else
// goes to the kernel unchanged: ARP, ICMP, IPv6 (and its neighbour
// discovery), other ports (SSH), fragments, IPv4 with options, and frames too
// short for the headers they claim, which the kernel then drops and counts.
//
// When no socket is registered for the queue, bpf_redirect_map's flags (the
// default action, XDP_PASS) hand the frame to the kernel instead of dropping
// it, so the interface never black-holes the service while sockets come and
// go.
//
// Build: go generate ./xdp/bpf (bpf2go, clang); the object and its Go
// loader are committed so builds need no clang.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>

// The few libbpf definitions this program needs, written out so the build
// depends on the kernel's UAPI headers only (no libbpf-dev).
#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) __typeof__(val) *name

static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)BPF_FUNC_redirect_map;
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define net16(x) __builtin_bswap16(x)
#else
#define net16(x) (x)
#endif

// Configuration, set from Go before the program is loaded (the loader
// rewrites these read-only globals), so the verifier sees constants.
// All three are in network byte order; 0 disables the rule (cfg_addr 0
// matches every destination address).
volatile const __u32 cfg_addr = 0;
volatile const __u16 cfg_tcp_port = 0;
volatile const __u16 cfg_udp_port = 0;

// AF_XDP sockets by RX queue. The loader sets max_entries to the highest
// configured queue plus one.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

// Counter indices; program.go mirrors them (counterSteered...).
enum counter {
	COUNTER_STEERED = 0,  // redirected to an AF_XDP socket
	COUNTER_PASSED = 1,   // not for the service: handed to the kernel
	COUNTER_FALLBACK = 2, // for the service, but no socket on this queue: to the kernel
	COUNTER_DROPPED = 3,  // for the service, and the redirect failed outright
	COUNTER_MAX = 4,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTER_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which) {
	__u64 *n = bpf_map_lookup_elem(&counters, &which);
	if (n)
		*n += 1; // per-CPU slot: no other CPU writes it
}

static __always_inline int pass(void) {
	count(COUNTER_PASSED);
	return XDP_PASS;
}

// IPv4 flags/fragment-offset bits: more fragments and the offset itself.
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

SEC("xdp")
int steer(struct xdp_md *ctx) {
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;

	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return pass();
	if (eth->h_proto != net16(ETH_P_IP))
		return pass(); // ARP, IPv6, VLAN tags: the kernel's

	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end)
		return pass();
	// Only the plain 20-byte header is parsed; options go to the kernel.
	if (ip->version != 4 || ip->ihl != 5)
		return pass();
	if (ip->frag_off & net16(IP_MF | IP_OFFSET))
		return pass(); // fragments are reassembled by the kernel
	if (cfg_addr != 0 && ip->daddr != cfg_addr)
		return pass();
	// The IP packet must lie inside the frame (Ethernet padding may
	// follow it); a frame shorter than its IP length is the kernel's to drop.
	__u16 total = net16(ip->tot_len);
	if (total < sizeof(*ip) || (void *)ip + total > end)
		return pass();

	void *l4 = (void *)(ip + 1);
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = l4;
		if (cfg_tcp_port == 0 || (void *)(tcp + 1) > end || tcp->dest != cfg_tcp_port)
			return pass();
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = l4;
		if (cfg_udp_port == 0 || (void *)(udp + 1) > end || udp->dest != cfg_udp_port)
			return pass();
	} else {
		return pass(); // ICMP and the rest
	}

	long act = bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
	if (act == XDP_REDIRECT)
		count(COUNTER_STEERED);
	else if (act == XDP_PASS)
		count(COUNTER_FALLBACK);
	else
		count(COUNTER_DROPPED);
	return act;
}

char __license[] SEC("license") = "Dual MIT/GPL";
