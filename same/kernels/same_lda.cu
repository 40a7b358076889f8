// SAME Gibbs LDA hot steps for CUDA (loaded by same/kernels/cuda.py through cupy.RawModule).
//
// Layout: CSR block of documents (indptr, indices, data = counts), theta (D x K, row-major),
// phi_t (W x K, row-major = phi transposed), all float32.  One thread block per document
// keeps the document's theta row in shared memory; one warp per nonzero, lanes over topics,
// so the reads of phi_t[w, :] are coalesced.
//
// Random numbers: the same counter-based generator as the CPU kernels (same/kernels/cpu.py):
// uniform(key, ctr) = splitmix64(key + ctr * 0x9E3779B97F4A7C15) with 53 random bits, counter
// (slot << 20) + attempt, slot = j * (K + 1) + k, and a fresh key per call.  The GPU kernel
// draws every (nonzero, topic) directly (no pooling), which is equal in distribution to the
// CPU kernel's pooled path.

#define SAME_GOLDEN 0x9E3779B97F4A7C15ULL

__device__ __forceinline__ unsigned long long same_mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

__device__ __forceinline__ double same_uniform(unsigned long long key, unsigned long long ctr) {
    unsigned long long x = same_mix64(key + ctr * SAME_GOLDEN);
    return ((double)(long long)(x >> 11) + 0.5) * 1.1102230246251565e-16;  // 2^-53
}

// Exact Poisson(lam): inversion below 10 (no exp when u < 1 - lam), PTRS (Hormann 1993) above.
__device__ int same_poisson(double lam, unsigned long long key, unsigned long long base) {
    if (lam <= 0.0) return 0;
    if (lam < 10.0) {
        double u = same_uniform(key, base);
        if (u < 1.0 - lam) return 0;
        double p = exp(-lam), cdf = p;
        int k = 0;
        while (u > cdf && p > 0.0) {
            k += 1;
            p *= lam / k;
            cdf += p;
        }
        return k;
    }
    double slam = sqrt(lam);
    double b = 0.931 + 2.53 * slam;
    double a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (unsigned long long r = 0;; r += 2) {
        double uu = same_uniform(key, base + r) - 0.5;
        double v = same_uniform(key, base + r + 1);
        double us = 0.5 - fabs(uu);
        double k = floor((2.0 * a / us + b) * uu + lam + 0.43);
        if (us >= 0.07 && v <= vr) return (int)k;
        if (k < 0.0 || (us < 0.013 && v > us)) continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * log(lam) - lgamma(k + 1.0))
            return (int)k;
    }
}

// mu[j] = sum_k theta[d, k] * phi_t[w_j, k]   (SDDMM, paper Alg. 3 line 3), float and double
#define SAME_DEFINE_SDDMM(T, NAME)                                                              \
    extern "C" __global__ void NAME(const long long* __restrict__ indptr,                       \
                                    const int* __restrict__ indices,                            \
                                    const T* __restrict__ theta, const T* __restrict__ phi_t,   \
                                    T* __restrict__ mu, int n_docs, int n_topics) {             \
        extern __shared__ unsigned char smem_raw[];                                             \
        T* theta_row = reinterpret_cast<T*>(smem_raw);                                          \
        int d = blockIdx.x;                                                                     \
        if (d >= n_docs) return;                                                                \
        for (int k = threadIdx.x; k < n_topics; k += blockDim.x)                                \
            theta_row[k] = theta[(long long)d * n_topics + k];                                  \
        __syncthreads();                                                                        \
        int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;        \
        for (long long j = indptr[d] + warp; j < indptr[d + 1]; j += n_warps) {                 \
            const T* row = phi_t + (long long)indices[j] * n_topics;                            \
            T s = 0;                                                                            \
            for (int k = lane; k < n_topics; k += 32) s += theta_row[k] * row[k];               \
            for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffff, s, off);   \
            if (lane == 0) mu[j] = s;                                                           \
        }                                                                                       \
    }

SAME_DEFINE_SDDMM(float, same_sddmm_f32)
SAME_DEFINE_SDDMM(double, same_sddmm_f64)

// z ~ Poisson(m c_j theta_dk phi_kw / mu_j); T[d, k] += z; P_t[w, k] += z (if accumulate_p).
// T rows are accumulated in shared memory and written once; P_t with atomics, nonzero z only.
extern "C" __global__ void same_sample_accumulate(
        const long long* __restrict__ indptr, const int* __restrict__ indices,
        const float* __restrict__ data, const float* __restrict__ theta,
        const float* __restrict__ phi_t, const float* __restrict__ mu, double n_samples,
        unsigned long long key, float* __restrict__ doc_topic_out,
        float* __restrict__ topic_word_out, int accumulate_p, int n_docs, int n_topics) {
    extern __shared__ float shared[];
    float* theta_row = shared;
    float* t_row = shared + n_topics;
    int d = blockIdx.x;
    if (d >= n_docs) return;
    for (int k = threadIdx.x; k < n_topics; k += blockDim.x) {
        theta_row[k] = theta[(long long)d * n_topics + k];
        t_row[k] = 0.f;
    }
    __syncthreads();
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    unsigned long long slots = (unsigned long long)n_topics + 1ULL;
    for (long long j = indptr[d] + warp; j < indptr[d + 1]; j += n_warps) {
        if (mu[j] <= 0.f) continue;
        int w = indices[j];
        const float* row = phi_t + (long long)w * n_topics;
        double scale = n_samples * (double)data[j] / (double)mu[j];
        unsigned long long base = (unsigned long long)j * slots;
        for (int k = lane; k < n_topics; k += 32) {
            double lam = scale * (double)theta_row[k] * (double)row[k];
            int z = same_poisson(lam, key, (base + (unsigned long long)k) << 20);
            if (z > 0) {
                atomicAdd(&t_row[k], (float)z);
                if (accumulate_p) atomicAdd(&topic_word_out[(long long)w * n_topics + k], (float)z);
            }
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < n_topics; k += blockDim.x)
        doc_topic_out[(long long)d * n_topics + k] = t_row[k];
}

// out[i] ~ Poisson(lam[i]), counter i << 20 of stream key (the "summed" sampler's draws).
extern "C" __global__ void same_poisson_dense(const float* __restrict__ lam, unsigned long long key,
                                              float* __restrict__ out, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (float)same_poisson((double)lam[i], key, ((unsigned long long)i) << 20);
}
