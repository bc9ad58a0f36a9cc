#include "core/background_task.hpp"

#include <utility>

namespace grove {

BackgroundTask::~BackgroundTask()
{
    if (!thread_.joinable()) return;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return done_; });
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void BackgroundTask::post(std::function<void()> job)
{
    wait();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = std::move(job);
        done_ = false;
    }
    pending_ = true;
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    changed_.notify_all();
}

void BackgroundTask::wait()
{
    if (!pending_) return;
    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return done_; });
        error = std::exchange(error_, nullptr);
    }
    pending_ = false;
    if (error) std::rethrow_exception(error);
}

void BackgroundTask::loop()
{
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stop_ || !done_; });
        if (stop_) return;
        std::function<void()> job = std::move(job_);
        lock.unlock();
        std::exception_ptr error;
        try {
            job();
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        error_ = error;
        done_ = true;
        changed_.notify_all();
    }
}

} // namespace grove
