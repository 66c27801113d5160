// The fixture of the C++ façade's memory tests (the <capability>_facade_test.cpp
// files of memory) against the fake driver: the façade's device 0 and 1 and a
// stream, over the C fixture's; and EXPECT_THROWS_STATUS, which checks the
// status a façade call throws.
#pragma once

#include <cucore.hpp>

#include "memory_support.hpp"

#define EXPECT_THROWS_STATUS(expr, expected)                                        \
    do {                                                                            \
        try {                                                                       \
            (void)(expr);                                                           \
            ADD_FAILURE() << #expr << " did not throw";                             \
        } catch (const cucore::Error &e) {                                          \
            EXPECT_EQ(e.status(), (expected)) << e.what();                          \
        }                                                                           \
    } while (0)

class MemoryFacadeFixture : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        dev_ = cucore::Device::get(0);
        dev1_ = cucore::Device::get(1);
        s_ = dev_.create_stream();
    }
    void TearDown() override {
        s_.reset();
        dev_.reset();
        dev1_.reset();
        MemoryFixture::TearDown();
    }
    Bytes read(const cucore::Buffer &b) {
        Bytes out(static_cast<size_t>(b.size()));
        b.copy_to_host(out, s_);
        s_.synchronize();
        return out;
    }
    cucore::Device dev_, dev1_;
    cucore::Stream s_;
};
