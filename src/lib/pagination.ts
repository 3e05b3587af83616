export interface PageRequest {
  page: number;
  size: number;
}

export interface Page<T> {
  data: T[];
  page: { size: number; total_elements: number; total_pages: number; number: number };
}

export function toPage<T>(data: T[], total: number, request: PageRequest): Page<T> {
  return {
    data,
    page: {
      size: request.size,
      total_elements: total,
      total_pages: Math.ceil(total / request.size),
      number: request.page,
    },
  };
}

export function offsetOf(request: PageRequest): number {
  return request.page * request.size;
}
