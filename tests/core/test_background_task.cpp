// The background task that builds a block tick's next tree structure: jobs one after another on
// one thread kept between them, errors rethrown to the caller, and no job left running at its end.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/background_task.hpp"

using namespace grove;

TEST_CASE("a background task runs its jobs one after another on one thread of its own", "[core]")
{
    BackgroundTask task;
    CHECK_FALSE(task.pending());
    task.wait(); // nothing posted: returns at once
    std::vector<int> order;
    std::vector<std::thread::id> threads;
    for (int k = 0; k < 5; ++k)
        task.post([&, k] {
            // The later jobs would overtake a slow first one if post() did not wait for it.
            if (k == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            order.push_back(k);
            threads.push_back(std::this_thread::get_id());
        });
    CHECK(task.pending());
    task.wait();
    CHECK_FALSE(task.pending());
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
    REQUIRE(threads.size() == 5);
    CHECK(threads[0] != std::this_thread::get_id());
    for (const auto& id : threads) CHECK(id == threads[0]);
}

TEST_CASE("a background task's error reaches the caller, and the task goes on", "[core]")
{
    BackgroundTask task;
    task.post([] { throw std::runtime_error("the build failed"); });
    CHECK_THROWS_WITH(task.wait(), "the build failed");
    CHECK_FALSE(task.pending());
    // An error not waited for is thrown by the next post, which then does not start its job.
    task.post([] { throw std::runtime_error("again"); });
    bool ran = false;
    CHECK_THROWS_WITH(task.post([&] { ran = true; }), "again");
    CHECK_FALSE(ran);
    task.post([&] { ran = true; });
    task.wait();
    CHECK(ran);
}

TEST_CASE("a background task's end waits for the job in flight", "[core]")
{
    std::atomic<bool> done{false};
    {
        BackgroundTask task;
        task.post([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            done = true;
        });
    }
    CHECK(done);
    BackgroundTask never_used; // no thread made, nothing to wait for
}
