// One job at a time on a thread of its own that lives between jobs. A thread made per job would
// also make its OpenMP team anew at each job's first parallel loop; this one keeps it. post()
// starts a job once the last one is done; wait() returns when the job in flight is done and
// rethrows what it threw, so a failure still reaches the caller.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace grove {

class BackgroundTask {
  public:
    BackgroundTask() = default;
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;
    ~BackgroundTask(); // waits for the job in flight; its error, if any, is lost

    // Waits for the job in flight (rethrowing its error), then starts `job` on the thread (made
    // at the first post).
    void post(std::function<void()> job);
    // Waits for the job in flight, if any; throws its error, if it threw.
    void wait();
    // Whether a job was posted and not yet waited for.
    bool pending() const { return pending_; }

  private:
    void loop();
    std::mutex mutex_;
    std::condition_variable changed_;
    std::function<void()> job_; // the job to run, or running (until done_)
    bool done_ = true, stop_ = false;
    bool pending_ = false; // the caller's view: posted, not yet waited for
    std::exception_ptr error_;
    std::thread thread_;
};

} // namespace grove
