package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testnet"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The gRPC exchange (issue 21): grpc-go's interop TestService, served by
// grpc-go over h2c, reached by a grpc-go client through the binary.
const (
	// grpcCount is the message count of each streaming call and the
	// round trips of the ping-pong.
	grpcCount = 100
	// grpcBurst is the bidi calls run at once, and grpcConcurrent the
	// unary calls in flight at once on one connection.
	grpcBurst      = 20
	grpcConcurrent = 200
	// grpcLarge is the large message each way: past the default 64 KiB
	// stream windows of both hops and simdedge's connection window.
	grpcLarge = 4 << 20
	// grpcMaxMsg lets grpc-go (whose default limit is 4 MiB) take
	// grpcLarge plus its protobuf framing.
	grpcMaxMsg = 16 << 20
	// grpcRunTimeout bounds one run's calls, generous for a shared
	// 2-CPU machine.
	grpcRunTimeout = 2 * time.Minute
	// grpcShortDeadline is the deadline the client gives the call the
	// server outsleeps; grpcSleepCap bounds that sleep if no cancellation
	// arrives (the server then notices by itself, the test by the time).
	grpcShortDeadline = 300 * time.Millisecond
	grpcSleepCap      = 30 * time.Second
	// grpcNotFound is the message of the non-OK status, with a space and
	// a percent sign that grpc-message must carry percent-encoded.
	grpcNotFound = "no such thing: 100% gone"
)

// grpcService implements TestService:
//   - UnaryCall echoes the payload, answers ResponseSize bytes, returns
//     ResponseStatus when it is set, reports the SHA-256 of the request's
//     payload in ServerId when asked (FillServerId), and sets a header and a trailer
//     derived from the request's x-req metadata;
//   - EmptyCall sleeps until its context ends (the deadline case);
//   - StreamingOutputCall sends one message per ResponseParameters;
//   - StreamingInputCall sums the payload sizes;
//   - FullDuplexCall answers each request as it comes.
type grpcService struct {
	testpb.UnimplementedTestServiceServer
	// slept receives how each EmptyCall ended.
	slept chan error
}

func grpcPayload(n int, seed int) *testpb.Payload {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed + i*7)
	}
	return &testpb.Payload{Body: b}
}

func (s *grpcService) UnaryCall(ctx context.Context, in *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("x-req")) == 1 {
		v := md.Get("x-req")[0]
		grpc.SetHeader(ctx, metadata.Pairs("x-hdr", "h-"+v))
		grpc.SetTrailer(ctx, metadata.Pairs("x-trl", "t-"+v, "x-trl-bin", string([]byte{0, 1, 2, 255})))
	}
	if st := in.GetResponseStatus(); st != nil && st.Code != 0 {
		return nil, status.Error(codes.Code(st.Code), st.Message)
	}
	out := &testpb.SimpleResponse{Payload: grpcPayload(int(in.ResponseSize), len(in.GetPayload().GetBody()))}
	if in.FillServerId {
		out.ServerId = fmt.Sprintf("%x", sha256.Sum256(in.GetPayload().GetBody()))
	}
	return out, nil
}

func (s *grpcService) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	select {
	case <-ctx.Done():
		s.slept <- ctx.Err()
		return nil, ctx.Err()
	case <-time.After(grpcSleepCap):
		s.slept <- errors.New("slept to the cap")
		return &testpb.Empty{}, nil
	}
}

func (s *grpcService) StreamingOutputCall(in *testpb.StreamingOutputCallRequest, st grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if len(in.ResponseParameters) == 0 {
		// The cancel case: one message, then wait for the client to
		// give up.
		if err := st.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		_, err := s.EmptyCall(st.Context(), nil)
		return err
	}
	for i, p := range in.ResponseParameters {
		if err := st.Send(&testpb.StreamingOutputCallResponse{Payload: grpcPayload(int(p.Size), i)}); err != nil {
			return err
		}
	}
	return nil
}

func (s *grpcService) StreamingInputCall(st grpc.ClientStreamingServer[testpb.StreamingInputCallRequest, testpb.StreamingInputCallResponse]) error {
	sum := 0
	for {
		in, err := st.Recv()
		if err == io.EOF {
			return st.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(sum)})
		}
		if err != nil {
			return err
		}
		sum += len(in.GetPayload().GetBody())
	}
}

func (s *grpcService) FullDuplexCall(st grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	for {
		in, err := st.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, p := range in.ResponseParameters {
			out := &testpb.StreamingOutputCallResponse{Payload: grpcPayload(int(p.Size), len(in.GetPayload().GetBody()))}
			if err := st.Send(out); err != nil {
				return err
			}
		}
	}
}

// startGRPCBackend serves grpcService over h2c on loopback until the test
// ends.
func startGRPCBackend(t *testing.T) (string, *grpcService) {
	t.Helper()
	l := testnet.Listen(t)
	svc := &grpcService{slept: make(chan error, 16)}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(grpcMaxMsg), grpc.MaxSendMsgSize(grpcMaxMsg))
	testpb.RegisterTestServiceServer(srv, svc)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return l.Addr().String(), svc
}

// TestGRPCThroughProxy: a grpc-go client and server talk through the
// simdedge binary (downstream h2c with prior knowledge and h2 over TLS by
// ALPN, upstream an h2c:// target) on each engine and proxy path, in all
// four call kinds: unary with metadata both ways, server streaming,
// client streaming, bidi ping-pong and a concurrent burst, a 4 MiB message
// each way, a non-OK status with its message, a deadline the server
// outsleeps (the proxy stays healthy after it), and many concurrent calls
// on one connection. The direct run (no proxy) checks the test itself.
func TestGRPCThroughProxy(t *testing.T) {
	needBinary(t)
	backend, svc := startGRPCBackend(t)
	t.Run("direct", func(t *testing.T) {
		grpcCalls(t, backend, insecure.NewCredentials(), svc, false)
	})
	ca := testcert.NewCA(t, "interop CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	tlsCreds := credentials.NewTLS(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})
	for _, run := range []struct {
		engine string
		onLoop bool
	}{{"goroutine", false}, {"loop", false}, {"loop", true}} {
		t.Run(fmt.Sprintf("%s/proxy_on_loop=%v", run.engine, run.onLoop), func(t *testing.T) {
			plain := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			secure := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			conf := fmt.Sprintf(`engine: %s
proxy_on_loop: %v
listeners:
  - address: %q
    h2c: true
  - address: %q
    tls:
      certificates: [{cert: %q, key: %q}]
upstreams:
  - name: grpc
    targets: ["h2c://%s"]
routes:
  - match: {path_prefix: /}
    proxy: {upstream: grpc}
`, run.engine, run.onLoop, plain, secure, leaf.CertFile, leaf.KeyFile, backend)
			startSimdedge(t, conf, plain)
			waitListening(t, secure)
			t.Run("h2c", func(t *testing.T) { grpcCalls(t, plain, insecure.NewCredentials(), svc, true) })
			t.Run("tls", func(t *testing.T) { grpcCalls(t, secure, tlsCreds, svc, true) })
		})
	}
}

// grpcCalls runs every case on one client connection to addr (the proxy's
// when viaProxy: its Via field must then be in the response headers).
func grpcCalls(t *testing.T, addr string, creds credentials.TransportCredentials, svc *grpcService, viaProxy bool) {
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcMaxMsg), grpc.MaxCallSendMsgSize(grpcMaxMsg)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := testpb.NewTestServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), grpcRunTimeout)
	defer cancel()
	t.Run("unary", func(t *testing.T) {
		if hdr := grpcUnary(t, ctx, c); viaProxy != (len(hdr.Get("via")) > 0) {
			t.Errorf("Via %q, want it only through the proxy", hdr.Get("via"))
		}
	})
	t.Run("server-streaming", func(t *testing.T) { grpcServerStreaming(t, ctx, c) })
	t.Run("client-streaming", func(t *testing.T) { grpcClientStreaming(t, ctx, c) })
	t.Run("bidi", func(t *testing.T) { grpcPingPong(t, ctx, c) })
	t.Run("bidi-burst", func(t *testing.T) { grpcBidiBurst(t, ctx, c) })
	t.Run("large", func(t *testing.T) { grpcLargeMessage(t, ctx, c) })
	t.Run("status", func(t *testing.T) { grpcStatus(t, ctx, c) })
	t.Run("deadline", func(t *testing.T) { grpcDeadline(t, ctx, c, svc) })
	t.Run("cancel", func(t *testing.T) { grpcCancel(t, ctx, c, svc) })
	t.Run("concurrent", func(t *testing.T) { grpcConcurrentUnary(t, ctx, c) })
}

// grpcUnary makes a unary call and returns its response headers.
func grpcUnary(t *testing.T, ctx context.Context, c testpb.TestServiceClient) metadata.MD {
	var hdr, trl metadata.MD
	ctx = metadata.AppendToOutgoingContext(ctx, "x-req", "v1")
	out, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 10, Payload: grpcPayload(3, 0)},
		grpc.Header(&hdr), grpc.Trailer(&trl))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.GetPayload().GetBody(), grpcPayload(10, 3).Body) {
		t.Fatalf("payload %x", out.GetPayload().GetBody())
	}
	if got := hdr.Get("x-hdr"); len(got) != 1 || got[0] != "h-v1" {
		t.Errorf("header x-hdr %q, want h-v1 (headers %v)", got, hdr)
	}
	if got := trl.Get("x-trl"); len(got) != 1 || got[0] != "t-v1" {
		t.Errorf("trailer x-trl %q, want t-v1 (trailers %v)", got, trl)
	}
	if got := trl.Get("x-trl-bin"); len(got) != 1 || got[0] != string([]byte{0, 1, 2, 255}) {
		t.Errorf("binary trailer x-trl-bin %q (trailers %v)", got, trl)
	}
	return hdr
}

func grpcServerStreaming(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	req := &testpb.StreamingOutputCallRequest{}
	for i := range grpcCount {
		req.ResponseParameters = append(req.ResponseParameters, &testpb.ResponseParameters{Size: int32(1 + i*37)})
	}
	st, err := c.StreamingOutputCall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range grpcCount {
		out, err := st.Recv()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(out.GetPayload().GetBody(), grpcPayload(1+i*37, i).Body) {
			t.Fatalf("message %d differs", i)
		}
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("after %d messages: %v, want EOF (status OK)", grpcCount, err)
	}
}

func grpcClientStreaming(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	st, err := c.StreamingInputCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range grpcCount {
		n := 1 + i*53
		want += n
		if err := st.Send(&testpb.StreamingInputCallRequest{Payload: grpcPayload(n, i)}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	out, err := st.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if int(out.AggregatedPayloadSize) != want {
		t.Fatalf("sum %d, want %d", out.AggregatedPayloadSize, want)
	}
}

// grpcPingPong sends one request and waits for its answer, grpcCount
// times: each message must cross both hops when it is written, not when a
// buffer fills or the stream ends.
func grpcPingPong(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	if err := grpcBidi(ctx, c, 0); err != nil {
		t.Fatal(err)
	}
}

func grpcBidi(ctx context.Context, c testpb.TestServiceClient, seed int) error {
	st, err := c.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	for i := range grpcCount {
		n := 1 + (seed*31+i*13)%2000
		req := &testpb.StreamingOutputCallRequest{Payload: grpcPayload(i, seed),
			ResponseParameters: []*testpb.ResponseParameters{{Size: int32(n)}}}
		if err := st.Send(req); err != nil {
			return fmt.Errorf("call %d send %d: %w", seed, i, err)
		}
		out, err := st.Recv()
		if err != nil {
			return fmt.Errorf("call %d round trip %d: %w", seed, i, err)
		}
		if !bytes.Equal(out.GetPayload().GetBody(), grpcPayload(n, i).Body) {
			return fmt.Errorf("call %d round trip %d: answer differs", seed, i)
		}
	}
	// The half-close must reach the server, whose return then ends the
	// stream with status OK.
	if err := st.CloseSend(); err != nil {
		return err
	}
	if _, err := st.Recv(); err != io.EOF {
		return fmt.Errorf("call %d after half-close: %v, want EOF", seed, err)
	}
	return nil
}

func grpcBidiBurst(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	errs := make(chan error, grpcBurst)
	for i := range grpcBurst {
		go func() { errs <- grpcBidi(ctx, c, i+1) }()
	}
	for range grpcBurst {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func grpcLargeMessage(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	in := grpcPayload(grpcLarge, 5)
	out, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: grpcLarge, Payload: in, FillServerId: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.GetPayload().GetBody(), grpcPayload(grpcLarge, grpcLarge).Body) {
		t.Fatalf("large answer differs (%d bytes)", len(out.GetPayload().GetBody()))
	}
	if want := fmt.Sprintf("%x", sha256.Sum256(in.Body)); out.ServerId != want {
		t.Fatalf("large request arrived changed: SHA-256 %s, want %s", out.ServerId, want)
	}
}

// grpcStatus: grpc-go answers an error before any message as a
// trailers-only response (one HEADERS frame with END_STREAM carrying
// grpc-status and grpc-message); code, message and trailers must arrive.
func grpcStatus(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	var trl metadata.MD
	ctx = metadata.AppendToOutgoingContext(ctx, "x-req", "v2")
	_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseStatus: &testpb.EchoStatus{
		Code: int32(codes.NotFound), Message: grpcNotFound}}, grpc.Trailer(&trl))
	st, _ := status.FromError(err)
	if st.Code() != codes.NotFound || st.Message() != grpcNotFound {
		t.Fatalf("status %v %q, want NotFound %q", st.Code(), st.Message(), grpcNotFound)
	}
	if got := trl.Get("x-trl"); len(got) != 1 || got[0] != "t-v2" {
		t.Errorf("trailer x-trl %q with the error, want t-v2 (trailers %v)", got, trl)
	}
}

// grpcDeadline: the server outsleeps the client's deadline; the client
// sees DeadlineExceeded, the server's call ends, and the next call works.
func grpcDeadline(t *testing.T, ctx context.Context, c testpb.TestServiceClient, svc *grpcService) {
	for len(svc.slept) > 0 {
		<-svc.slept
	}
	short, cancel := context.WithTimeout(ctx, grpcShortDeadline)
	defer cancel()
	_, err := c.EmptyCall(short, &testpb.Empty{})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err %v, want DeadlineExceeded", err)
	}
	select {
	case err := <-svc.slept:
		if err == nil || err.Error() == "slept to the cap" {
			t.Errorf("server call ended with %v, want its context done", err)
		}
	case <-ctx.Done():
		t.Fatal("the server's call did not end")
	}
	grpcUnary(t, ctx, c)
}

func grpcConcurrentUnary(t *testing.T, ctx context.Context, c testpb.TestServiceClient) {
	var wg sync.WaitGroup
	errs := make(chan error, grpcConcurrent)
	for i := range grpcConcurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 1 + i*101%5000
			out, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: int32(n), Payload: grpcPayload(i, i)})
			if err == nil && !bytes.Equal(out.GetPayload().GetBody(), grpcPayload(n, i).Body) {
				err = fmt.Errorf("call %d: answer differs", i)
			}
			if err != nil {
				errs <- fmt.Errorf("call %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// grpcCancel: the client cancels a server-streaming call (no deadline)
// while the server waits; the cancellation must reach the server through
// the proxy (the client's RST_STREAM becomes one upstream), or the
// upstream stream would stay open until the server wrote again.
func grpcCancel(t *testing.T, ctx context.Context, c testpb.TestServiceClient, svc *grpcService) {
	for len(svc.slept) > 0 {
		<-svc.slept
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.StreamingOutputCall(cctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := st.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v, want Canceled", err)
	}
	select {
	case err := <-svc.slept:
		if err == nil || err.Error() == "slept to the cap" {
			t.Errorf("server call ended with %v, want its context cancelled", err)
		}
	case <-ctx.Done():
		t.Fatal("the server's call did not end")
	}
	grpcUnary(t, ctx, c)
}
