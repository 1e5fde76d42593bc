// tcp_step_model: a model of one sync PS step between 1 server and 1 trainer on one node over TCP, to find what
// the bar "1 server + 1 trainer over --mca btl tcp,self at >= 0.85x local" needs from the transport. Run by
// tcp_step_model.sh under `mpirun -np 2` (rank 0 the server, rank 1 the trainer); see benchmarks/README.md.
//
// The trainer computes for --step-ms a step (a calibrated arithmetic loop standing for the model's kernels).
// The last --last-layer-share of it stands for the first layer's weight gradient, the product that ends the
// backward pass: its gradient (--floats, all of the model's bytes, as the MLP's first layer holds 85% of them)
// goes to the server, which applies an update and sends the parameters back; the next forward pass waits for all
// of them, or with --split-forward 1 runs the first layer's product (another --last-layer-share of the step) in
// pieces, each as soon as its parameters are back (cut along the input features, that would change the sums and
// so the sync bits; along the outputs it would need the layer stored as column blocks). Variants:
//   compute        the step without an exchange (the local run)
//   socket-inline  after the backward, one blocking send and receive on a loopback TCP socket
//   socket-thread  a communication thread sends each of --pieces pieces as the backward produces it, blocking
//                  in the kernel while it waits (what a transport with its own I/O thread could do)
//   mpi-inline     after the backward, MPI_Isend/MPI_Irecv and MPI_Waitall (what pstrain does without overlap)
//   mpi-thread     the communication thread with MPI (MPI_THREAD_SERIALIZED: only it calls MPI while the
//                  trainer runs), waiting by MPI_Testall and a yield, the server likewise
// It prints "variant,ms_per_step" on the trainer; the script alternates the variants and takes medians.
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string variant;
  double step_ms = 0.75;
  long floats = 235146;
  int pieces = 4;
  double last_layer_share = 0.37;
  bool split_forward = false;
  int steps = 2000;
  int warmup = 200;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--variant")
      o.variant = value;
    else if (key == "--step-ms")
      o.step_ms = std::stod(value);
    else if (key == "--floats")
      o.floats = std::stol(value);
    else if (key == "--pieces")
      o.pieces = std::stoi(value);
    else if (key == "--last-layer-share")
      o.last_layer_share = std::stod(value);
    else if (key == "--steps")
      o.steps = std::stoi(value);
    else if (key == "--split-forward")
      o.split_forward = value == "1";
    else
      throw std::invalid_argument("unknown option " + key);
  }
  const bool known = o.variant == "compute" || o.variant == "socket-inline" || o.variant == "socket-thread" ||
                     o.variant == "mpi-inline" || o.variant == "mpi-thread";
  if (!known)
    throw std::invalid_argument("--variant must be compute, socket-inline, socket-thread, mpi-inline or mpi-thread");
  if (o.pieces < 1 || o.floats < o.pieces || o.step_ms <= 0 || o.steps <= o.warmup)
    throw std::invalid_argument("need --pieces >= 1, --floats >= --pieces, --step-ms > 0, --steps > 200");
  if (o.variant.ends_with("inline")) o.pieces = 1;  // inline pieces only add round trips
  return o;
}

// ---- the computation -----------------------------------------------------------------------------------------

volatile float g_sink;

// Two dependent multiply-add chains: a fixed amount of work that touches no memory.
void compute(long iterations) {
  float a = 1.0f, b = 1.0f;
  for (long i = 0; i < iterations; ++i) {
    a = a * 1.0001f + 1e-7f;
    b = b * 0.9999f + 1e-7f;
  }
  g_sink = a + b;
}

// iterations_per_ms: the fastest of several timed runs, so that a busy moment does not lengthen every step.
double iterations_per_ms() {
  const long probe = 2'000'000;
  double best_ms = 1e30;
  for (int i = 0; i < 7; ++i) {
    const auto t0 = Clock::now();
    compute(probe);
    best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return probe / best_ms;
}

// ---- the two transports ----------------------------------------------------------------------------------------

void send_all(int fd, const float* data, long count) {
  auto* p = reinterpret_cast<const char*>(data);
  for (size_t left = count * sizeof(float); left > 0;) {
    const ssize_t n = send(fd, p, left, 0);
    if (n <= 0) throw std::runtime_error("send failed");
    p += n, left -= n;
  }
}

void recv_all(int fd, float* data, long count) {
  auto* p = reinterpret_cast<char*>(data);
  for (size_t left = count * sizeof(float); left > 0;) {
    const ssize_t n = recv(fd, p, left, 0);
    if (n <= 0) throw std::runtime_error("recv failed");
    p += n, left -= n;
  }
}

// A file descriptor, closed when it goes.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {
    if (fd_ < 0) throw std::runtime_error("cannot open a socket");
  }
  ~Descriptor() { close(fd_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A loopback TCP connection between the two ranks: the server listens on an ephemeral port and broadcasts it.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(int rank) : connection_(rank == 0 ? accept_one() : connect_to_server()) {
    const int one = 1;
    setsockopt(connection_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  int fd() const { return connection_.get(); }

 private:
  static sockaddr_in loopback() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }

  static int accept_one() {
    sockaddr_in address = loopback();
    const Descriptor listener(socket(AF_INET, SOCK_STREAM, 0));
    socklen_t length = sizeof address;
    if (bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(listener.get(), 1) != 0 ||
        getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot listen on the loopback interface");
    MPI_Bcast(&address.sin_port, sizeof address.sin_port, MPI_BYTE, 0, MPI_COMM_WORLD);
    return accept(listener.get(), nullptr, nullptr);
  }

  static int connect_to_server() {
    sockaddr_in address = loopback();
    MPI_Bcast(&address.sin_port, sizeof address.sin_port, MPI_BYTE, 0, MPI_COMM_WORLD);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(fd);
      throw std::runtime_error("cannot connect to the server's port");
    }
    return fd;
  }

  Descriptor connection_;
};

// wait_yielding: MPI_Testall until done, yielding the core between tests (pstrain's poll pause).
void wait_yielding(std::vector<MPI_Request>& requests) {
  for (int done = 0;;) {
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    sched_yield();
  }
}

// ---- the server --------------------------------------------------------------------------------------------------

// mpi_receive, mpi_send: one message from or to the other rank, waiting as pstrain's server does.
void mpi_receive(float* data, long count, int peer, int tag) {
  std::vector<MPI_Request> request(1);
  MPI_Irecv(data, static_cast<int>(count), MPI_FLOAT, peer, tag, MPI_COMM_WORLD, &request[0]);
  wait_yielding(request);
}

void mpi_send(const float* data, long count, int peer, int tag) {
  std::vector<MPI_Request> request(1);
  MPI_Isend(data, static_cast<int>(count), MPI_FLOAT, peer, tag, MPI_COMM_WORLD, &request[0]);
  wait_yielding(request);
}

// serve: per piece, receive the gradient, apply a step, send the parameters back.
void serve(const Options& o, LoopbackSocket* socket) {
  const long n = o.floats / o.pieces;
  std::vector<float> gradient(n), parameters(n, 0.0f);
  for (long piece = 0; piece < static_cast<long>(o.steps) * o.pieces; ++piece) {
    const int tag = static_cast<int>(piece % o.pieces);
    if (socket)
      recv_all(socket->fd(), gradient.data(), n);
    else
      mpi_receive(gradient.data(), n, 1, tag);
    for (long i = 0; i < n; ++i) parameters[i] -= 0.01f * gradient[i];
    if (socket)
      send_all(socket->fd(), parameters.data(), n);
    else
      mpi_send(parameters.data(), n, 1, tag);
  }
}

// ---- the trainer -----------------------------------------------------------------------------------------------

// The hand-over between the computing thread and the communication thread: pieces produced, steps returned.
struct Handover {
  std::mutex mutex;
  std::condition_variable changed;
  long pieces_ready = 0;
  long pieces_returned = 0;
};

void mark_returned(Handover& h, int pieces) {
  {
    std::lock_guard lock(h.mutex);
    h.pieces_returned += pieces;
  }
  h.changed.notify_all();
}

// wait_for_piece: the forward pass's wait for the previous step's parameters, piece by piece or all at once.
void wait_for_piece(const Options& o, Handover& h, long step, int piece) {
  const long needed = o.split_forward ? (step - 1) * o.pieces + piece + 1 : step * o.pieces;
  std::unique_lock lock(h.mutex);
  h.changed.wait(lock, [&] { return h.pieces_returned >= needed; });
}

// exchange_step: the communication thread's work for one step.
void exchange_step(const Options& o, long step, Handover& h, LoopbackSocket* socket, std::vector<float>& gradient,
                   std::vector<float>& parameters) {
  const long n = o.floats / o.pieces;
  std::vector<MPI_Request> requests;
  for (int piece = 0; piece < o.pieces; ++piece) {
    {
      std::unique_lock lock(h.mutex);
      h.changed.wait(lock, [&] { return h.pieces_ready > step * o.pieces + piece; });
    }
    float* g = gradient.data() + piece * n;
    float* p = parameters.data() + piece * n;
    if (socket) {
      send_all(socket->fd(), g, n);
      recv_all(socket->fd(), p, n);
      mark_returned(h, 1);
      continue;
    }
    requests.resize(requests.size() + 2);
    MPI_Irecv(p, n, MPI_FLOAT, 0, piece, MPI_COMM_WORLD, &requests[requests.size() - 2]);
    MPI_Isend(g, n, MPI_FLOAT, 0, piece, MPI_COMM_WORLD, &requests.back());
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
  }
  if (!requests.empty()) wait_yielding(requests), mark_returned(h, o.pieces);
}

void exchange_inline(const Options& o, LoopbackSocket* socket, std::vector<float>& gradient,
                     std::vector<float>& parameters) {
  if (socket) {
    send_all(socket->fd(), gradient.data(), o.floats);
    recv_all(socket->fd(), parameters.data(), o.floats);
    return;
  }
  MPI_Request requests[2];
  MPI_Irecv(parameters.data(), o.floats, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(gradient.data(), o.floats, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
}

// train: the steps; returns milliseconds per step after the warm-up.
double train(const Options& o, LoopbackSocket* socket) {
  const double per_ms = iterations_per_ms();
  const long last_layer = static_cast<long>(o.step_ms * o.last_layer_share * per_ms / o.pieces);
  const int last_layer_products = o.split_forward ? 2 : 1;  // with the first layer's forward product in pieces
  const long rest = static_cast<long>(o.step_ms * per_ms) - last_layer_products * last_layer * o.pieces;
  const long floats = o.floats / o.pieces * o.pieces;
  std::vector<float> gradient(floats, 1.0f), parameters(floats, 0.0f);
  const bool threaded = o.variant.ends_with("thread"), exchanges = o.variant != "compute";
  Handover h;
  std::thread communication;
  if (threaded)
    communication = std::thread([&] {
      for (long step = 0; step < o.steps; ++step) exchange_step(o, step, h, socket, gradient, parameters);
    });
  Clock::time_point start;
  for (long step = 0; step < o.steps; ++step) {
    if (step == o.warmup) start = Clock::now();
    if (threaded && !o.split_forward) wait_for_piece(o, h, step, 0);
    for (int piece = 0; o.split_forward && piece < o.pieces; ++piece) {
      if (threaded && step > 0) wait_for_piece(o, h, step, piece);
      compute(last_layer);
    }
    compute(rest);
    for (int piece = 0; piece < o.pieces; ++piece) {
      compute(last_layer);
      if (!threaded) continue;
      {
        std::lock_guard lock(h.mutex);
        ++h.pieces_ready;
      }
      h.changed.notify_all();
    }
    if (exchanges && !threaded) exchange_inline(o, socket, gradient, parameters);
  }
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (threaded) communication.join();
  return ms / (o.steps - o.warmup);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    if (size != 2) throw std::invalid_argument("run it with mpirun -np 2");
    if (provided < MPI_THREAD_SERIALIZED) throw std::runtime_error("MPI_THREAD_SERIALIZED is not provided");
    const Options o = parse(argc, argv);
    std::unique_ptr<LoopbackSocket> socket;
    if (o.variant.starts_with("socket")) socket = std::make_unique<LoopbackSocket>(rank);
    if (rank == 0 && o.variant != "compute") serve(o, socket.get());
    if (rank == 1) std::printf("%s,%.4f\n", o.variant.c_str(), train(o, socket.get()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp_step_model: %s\n", e.what());
    status = 1;
  }
  if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);
  MPI_Finalize();
  return 0;
}
